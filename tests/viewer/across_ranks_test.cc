// Ranks side by side (viewer/model/across_ranks.h): each rank's shift on a hand-built 3-rank run whose late
// rank is known, the last arrival the straggler analysis names, the instance found by group and sequence
// number; and the late peer of the golden CPU run's one late-peer pair.
#include <gtest/gtest.h>

#include "analyzer/analysis/run.h"
#include "viewer/model/across_ranks.h"
#include "viewer/model/flows.h"

namespace shardscope::viewer {
namespace {

using model::CollectiveKind;
using model::IntervalClass;

constexpr int64_t kWall = 1'000'000'000'000;  // the wall clock at trace time 0 on ranks 0 and 2
constexpr int64_t kMs = 1'000'000;
// Rank 1's trace clock runs half a second ahead of the others': only the wall clock lines them up.
int64_t skew(int r) { return r == 1 ? 500 * kMs : 0; }

// Three ranks, three all-gathers of group "dp" (seq 0, 1, 2) on a communication track, a compute track and
// one step. Rank 2 arrives 3 ms late at seq 1; rank 0 is 1 ms late at seq 0; at seq 2 all arrive together
// but rank 1, 2 ms late.
analysis::AnalysedRun three_ranks() {
  analysis::AnalysedRun run;
  for (int r = 0; r < 3; ++r) {
    model::Rank rank;
    rank.rank = r;
    rank.world_size = 3;
    rank.source = "rank" + std::to_string(r);
    rank.clock_sync = {{0, kWall - skew(r)}, {kMs * 1000, kWall - skew(r) + kMs * 1000}};
    const model::StringId ag = rank.strings.intern("all_gather"), group = rank.strings.intern("dp"),
                          fwd = rank.strings.intern("unit_forward");
    // Step 0 starts 5 ms in (plus 100 µs a rank), on the rank's own clock.
    rank.steps.push_back(
        {0, 5 * kMs + r * kMs / 10 + skew(r), 60 * kMs + skew(r), 5 * kMs + skew(r), 60 * kMs + skew(r), false});
    model::Track comm;
    comm.kind = model::TrackKind::Communication;
    comm.name = "comm";
    comm.tid = 1;
    for (uint32_t s = 0; s < 3; ++s) {
      int64_t late = (s == 0 && r == 0) ? kMs : (s == 1 && r == 2) ? 3 * kMs : (s == 2 && r == 1) ? 2 * kMs : 0;
      model::Event e;
      e.ts_ns = 10 * kMs * (s + 1) + late + skew(r);
      e.dur_ns = 4 * kMs - late;
      e.cls = IntervalClass::Communication;
      e.coll = CollectiveKind::AllGather;
      e.name = ag;
      e.group = group;
      e.seq = s;
      e.group_size = 3;
      e.bytes = 1 << 20;
      e.step = 0;
      comm.events.push_back(e);
    }
    model::Track compute;
    compute.kind = model::TrackKind::DeviceStream;
    compute.name = "compute";
    compute.tid = 2;
    model::Event c;
    c.ts_ns = 6 * kMs + skew(r);
    c.dur_ns = 40 * kMs;
    c.cls = IntervalClass::Compute;
    c.name = fwd;
    c.step = 0;
    compute.events.push_back(c);
    rank.tracks.push_back(std::move(comm));
    rank.tracks.push_back(std::move(compute));
    run.trace.ranks.push_back(std::move(rank));
  }
  analysis::analyse(run, analysis::Scope::Everything);
  return run;
}

metrics::InstanceId ag(int64_t seq) { return {CollectiveKind::AllGather, "dp", true, seq}; }

TEST(ViewerAcrossRanks, TracksSortedByWhatTheyCarry) {
  analysis::AnalysedRun run = three_ranks();
  AcrossRanks a(run);
  std::vector<RankRow> comm = a.on_step(0, TrackChoice::Communication), compute = a.on_step(0, TrackChoice::Compute);
  ASSERT_EQ(comm.size(), 3u);
  for (uint32_t r = 0; r < 3; ++r) {
    EXPECT_EQ(comm[r].tracks, std::vector<uint32_t>{0});
    EXPECT_EQ(compute[r].tracks, std::vector<uint32_t>{1});
    EXPECT_TRUE(a.on_step(0, TrackChoice::Host)[r].tracks.empty());
  }
}

TEST(ViewerAcrossRanks, StepAlignmentPutsEachRanksStepStartAtZero) {
  analysis::AnalysedRun run = three_ranks();
  AcrossRanks a(run);
  EXPECT_EQ(a.steps(), std::vector<int64_t>{0});
  std::vector<RankRow> rows = a.on_step(0, TrackChoice::Communication);
  ASSERT_EQ(rows.size(), 3u);
  for (uint32_t r = 0; r < 3; ++r) {
    ASSERT_TRUE(rows[r].origin_ns) << r;
    EXPECT_EQ(*rows[r].origin_ns, 5 * kMs + r * kMs / 10 + skew(int(r))) << r;
    EXPECT_FALSE(rows[r].instance);
  }
  // A step no rank has: no origin, the rows still listed.
  for (const RankRow& row : a.on_step(7, TrackChoice::Communication)) EXPECT_FALSE(row.origin_ns);
}

TEST(ViewerAcrossRanks, InstanceFoundByGroupAndSequence) {
  analysis::AnalysedRun run = three_ranks();
  AcrossRanks a(run);
  for (uint32_t r = 0; r < 3; ++r)
    for (int64_t s = 0; s < 3; ++s) {
      std::optional<model::EventRef> e = a.find(r, ag(s));
      ASSERT_TRUE(e);
      EXPECT_EQ(e->track, 0u);
      EXPECT_EQ(e->index, uint32_t(s));
      EXPECT_EQ(a.instance_of(r, *e), ag(s));
    }
  EXPECT_FALSE(a.find(0, ag(3)));
  EXPECT_FALSE(a.find(0, {CollectiveKind::AllGather, "tp", true, 1}));  // another group's seq 1
  EXPECT_FALSE(a.instance_of(0, {1, 0}));                               // a compute kernel
}

TEST(ViewerAcrossRanks, InstanceAlignmentOnTheWallClockMarksTheLastArrival) {
  analysis::AnalysedRun run = three_ranks();
  AcrossRanks a(run);
  // The analysis names rank 2 last at seq 1 (3 ms after the others).
  const metrics::StragglerInstance* s = a.straggler(ag(1));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->last_rank, 2);
  EXPECT_EQ(s->late_by_ns, 3 * kMs);
  std::vector<RankRow> rows = a.on_instance(ag(1), TrackChoice::Communication);
  ASSERT_EQ(rows.size(), 3u);
  // Ranks 0 and 1 arrived first: their all-gather at x = 0 whatever their trace clocks; rank 2's 3 ms after.
  for (uint32_t r = 0; r < 3; ++r) {
    ASSERT_TRUE(rows[r].origin_ns);
    ASSERT_TRUE(rows[r].instance);
    const model::Event& e = run.trace.ranks[r].tracks[rows[r].instance->track].events[rows[r].instance->index];
    EXPECT_EQ(e.ts_ns - *rows[r].origin_ns, r == 2 ? 3 * kMs : 0) << r;
    EXPECT_EQ(rows[r].last, r == 2) << r;
    EXPECT_FALSE(rows[r].late_peer);
  }
  // Seq 2: rank 1 (the skewed clock) is last, 2 ms after.
  rows = a.on_instance(ag(2), TrackChoice::Compute);
  EXPECT_TRUE(rows[1].last);
  EXPECT_FALSE(rows[0].last || rows[2].last);
  // Both origins are one wall-clock instant (rank 0's arrival): the skewed clock is taken out.
  EXPECT_EQ(*rows[0].origin_ns - skew(0), *rows[1].origin_ns - skew(1));
  EXPECT_EQ(*rows[0].origin_ns, 30 * kMs);
  // Every slice where its rank came last is marked, and only those.
  EXPECT_TRUE(a.arrived_last(0, {0, 0}));
  EXPECT_FALSE(a.arrived_last(0, {0, 1}));
  EXPECT_TRUE(a.arrived_last(2, {0, 1}));
  EXPECT_TRUE(a.arrived_last(1, {0, 2}));
  EXPECT_FALSE(a.arrived_last(1, {0, 1}));
  EXPECT_FALSE(a.arrived_last(0, {1, 0}));
}

TEST(ViewerAcrossRanks, LatePeerOfAPrefetchPairOnTheGoldenRun) {
  // Rank 1, step 2, unit 4 of the CPU trainer's BACKWARD_PRE run: rank 0 joined its all-gather late.
  analysis::AnalysedRun run =
      analysis::analyse_run({std::string(SHARDSCOPE_SOURCE_DIR) + "/tests/golden/trainer_cpu_2ranks/pre"}, {});
  ASSERT_EQ(run.trace.ranks.size(), 2u);
  AcrossRanks a(run);
  const metrics::UnitPrefetch* pair = nullptr;
  for (const metrics::StepPrefetch& s : run.report.ranks[1].prefetch.steps)
    for (const metrics::UnitPrefetch& u : s.units)
      if (s.step == 2 && u.unit == 4) pair = &u;
  ASSERT_TRUE(pair);
  ASSERT_EQ(pair->late_peer, 0);
  std::optional<metrics::InstanceId> id =
      a.instance_of(1, {uint32_t(pair->all_gather.track), uint32_t(pair->all_gather.index)});
  ASSERT_TRUE(id);
  EXPECT_EQ(a.prefetch_pair(1, *id), pair);
  std::vector<RankRow> rows = a.on_instance(*id, TrackChoice::Communication, 1u);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].late_peer);
  EXPECT_FALSE(rows[1].late_peer);
  // The late peer is the rank the straggler analysis names last there, and it is drawn after the other.
  EXPECT_TRUE(rows[0].last);
  EXPECT_FALSE(rows[1].last);
  auto x = [&](const RankRow& r) {
    return run.trace.ranks[r.rank].tracks[r.instance->track].events[r.instance->index].ts_ns - *r.origin_ns;
  };
  EXPECT_EQ(x(rows[1]), 0);
  EXPECT_GT(x(rows[0]), 0);
  // Asked from rank 0's side there is no late peer to mark (rank 0 was the late one).
  for (const RankRow& r : a.on_instance(*id, TrackChoice::Communication, 0u)) EXPECT_FALSE(r.late_peer);
}

// The flows of a selected collective (flows.h): every rank's copy of the instance, each linked to the copy of
// the rank the analysis names last there; worked out from three_ranks()'s lateness above, not from output.
TEST(ViewerFlows, CollectiveLinksEveryRankToTheLastArrival) {
  analysis::AnalysedRun run = three_ranks();
  AcrossRanks a(run);
  // Seq 1, selected on rank 0: rank 2 was 3 ms late.
  CollectiveFlows f = collective_flows(a, 0, {0, 1});
  ASSERT_EQ(f.ends.size(), 3u);
  for (uint32_t r = 0; r < 3; ++r) EXPECT_EQ(f.ends[r], (FlowEnd{r, {0, 1}})) << r;
  ASSERT_TRUE(f.last);
  EXPECT_EQ(*f.last, 2u);
  EXPECT_EQ(f.late_by_ns, 3 * kMs);
  EXPECT_EQ(f.links, (std::vector<Flow>{{{0, {0, 1}}, {2, {0, 1}}}, {{1, {0, 1}}, {2, {0, 1}}}}));
  // Selected on another rank: the same instance, the same links.
  EXPECT_EQ(collective_flows(a, 2, {0, 1}).links, f.links);
  // Seq 0: rank 0 was last (1 ms); seq 2: rank 1 (2 ms, on the skewed clock).
  f = collective_flows(a, 1, {0, 0});
  ASSERT_TRUE(f.last);
  EXPECT_EQ(*f.last, 0u);
  EXPECT_EQ(f.links, (std::vector<Flow>{{{1, {0, 0}}, {0, {0, 0}}}, {{2, {0, 0}}, {0, {0, 0}}}}));
  f = collective_flows(a, 2, {0, 2});
  ASSERT_TRUE(f.last);
  EXPECT_EQ(f.ends[*f.last].rank, 1u);
  EXPECT_EQ(f.links, (std::vector<Flow>{{{0, {0, 2}}, {1, {0, 2}}}, {{2, {0, 2}}, {1, {0, 2}}}}));
  // A compute kernel is no collective: no flows.
  f = collective_flows(a, 0, {1, 0});
  EXPECT_TRUE(f.ends.empty());
  EXPECT_TRUE(f.links.empty());
  EXPECT_FALSE(f.last);
}

TEST(ViewerFlows, UnmatchedInstanceChainsTheRanksWithNoneMarked) {
  // Rank 1 without clock_sync pairs while the others have them: the analysis matches no instance
  // (ClocksNotAnchored), so nobody is last; the copies still link, rank to next rank.
  analysis::AnalysedRun run = three_ranks();
  run.trace.ranks[1].clock_sync.clear();
  analysis::analyse(run, analysis::Scope::Everything);
  ASSERT_TRUE(run.report.stragglers.instances.empty());
  AcrossRanks a(run);
  CollectiveFlows f = collective_flows(a, 1, {0, 1});
  ASSERT_EQ(f.ends.size(), 3u);
  EXPECT_FALSE(f.last);
  EXPECT_EQ(f.links, (std::vector<Flow>{{{0, {0, 1}}, {1, {0, 1}}}, {{1, {0, 1}}, {2, {0, 1}}}}));
}

TEST(ViewerFlows, LaunchLinksBothWays) {
  // Host track 0: calls 2 and 3; device track 1: kernels 0 and 1 from call 2 (a collective's host range
  // starting two), kernel 2 from call 3.
  model::RankIndex index;
  index.launches = {{{0, 2}, {1, 0}}, {{0, 2}, {1, 1}}, {{0, 3}, {1, 2}}};
  EXPECT_EQ(launch_flows(index, 4, {1, 1}), (std::vector<Flow>{{{4, {0, 2}}, {4, {1, 1}}}}));
  EXPECT_EQ(launch_flows(index, 4, {1, 2}), (std::vector<Flow>{{{4, {0, 3}}, {4, {1, 2}}}}));
  EXPECT_EQ(launch_flows(index, 4, {0, 2}),
            (std::vector<Flow>{{{4, {0, 2}}, {4, {1, 0}}}, {{4, {0, 2}}, {4, {1, 1}}}}));
  EXPECT_TRUE(launch_flows(index, 4, {0, 0}).empty());  // a host call that launched nothing
  EXPECT_TRUE(launch_flows(index, 4, {1, 3}).empty());  // a kernel whose launch was not found
}

}  // namespace
}  // namespace shardscope::viewer
