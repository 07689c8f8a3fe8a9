// The instance table is a reduce: built from the ranks in any grouping and any order, it gives what the
// definition gives, worked out here from every rank's arrivals at once (sort each instance's arrivals by
// time, then by rank: the last is the straggler, the one before it sets how late).
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "analyzer/metrics/instances.h"

namespace shardscope::metrics {
namespace {

using model::CollectiveKind;

// Ranks with 40 all-gathers and 12 reduce-scatters each (rank 3 one all-gather short), arrivals on a coarse
// grid so that ties are common.
std::vector<RankArrivals> run(size_t ranks, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int64_t> jitter(0, 3);
  std::vector<RankArrivals> out;
  for (size_t r = 0; r < ranks; ++r) {
    RankArrivals a;
    a.key = {int(r), r};
    a.clock_mapped = true;
    for (size_t i = 0; i < (r == 3 ? 39u : 40u); ++i) {
      a.wall_start[CollectiveKind::AllGather].push_back(int64_t(i) * 100 + jitter(gen) * 10);
      // Kernel times 40-70 ns, the first five instances of unknown size.
      a.size[CollectiveKind::AllGather].push_back(
          {40 + jitter(gen) * 10, i < 5 ? model::kUnknown : int64_t(1000 * (i + 1)), 4});
    }
    for (size_t i = 0; i < 12; ++i) {
      a.wall_start[CollectiveKind::ReduceScatter].push_back(5000 + int64_t(i) * 100 + jitter(gen) * 10);
      a.size[CollectiveKind::ReduceScatter].push_back({20 + jitter(gen) * 10, 4000, 4});
    }
    out.push_back(a);
  }
  return out;
}

void expect_same(const Stragglers& a, const Stragglers& b) {
  ASSERT_EQ(a.instances.size(), b.instances.size());
  for (size_t i = 0; i < a.instances.size(); ++i) {
    EXPECT_EQ(a.instances[i].kind, b.instances[i].kind);
    EXPECT_EQ(a.instances[i].ordinal, b.instances[i].ordinal);
    EXPECT_EQ(a.instances[i].last_rank, b.instances[i].last_rank) << i;
    EXPECT_EQ(a.instances[i].late_by_ns, b.instances[i].late_by_ns) << i;
    EXPECT_EQ(a.instances[i].spread_ns, b.instances[i].spread_ns) << i;
  }
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    EXPECT_EQ(a.ranks[r].rank, b.ranks[r].rank);
    EXPECT_EQ(a.ranks[r].times_last, b.ranks[r].times_last);
    EXPECT_EQ(a.ranks[r].total_late_by_ns, b.ranks[r].total_late_by_ns);
  }
  ASSERT_EQ(a.notes.size(), b.notes.size());
}

void expect_same(const std::vector<LinkStats>& a, const std::vector<LinkStats>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].kind, b[i].kind);
    EXPECT_EQ(a[i].instances, b[i].instances);
    EXPECT_EQ(a[i].fastest_ns, b[i].fastest_ns);
    EXPECT_EQ(a[i].bytes, b[i].bytes);
    EXPECT_EQ(a[i].sized_fastest_ns, b[i].sized_fastest_ns);
  }
}

TEST(InstanceTable, StragglersFollowTheDefinition) {
  const std::vector<RankArrivals> ranks = run(6, 7);
  InstanceTable t;
  for (const RankArrivals& a : ranks) t.add(a);
  const Stragglers s = t.stragglers();
  // Rank 3 has 39 all-gathers: 39 of them and the 12 reduce-scatters are matched.
  ASSERT_EQ(s.instances.size(), 39u + 12u);
  size_t checked = 0;
  for (const StragglerInstance& in : s.instances) {
    std::vector<std::pair<int64_t, int>> arr;
    for (const RankArrivals& a : ranks) arr.push_back({a.wall_start.at(in.kind)[in.ordinal], a.key.rank});
    std::sort(arr.begin(), arr.end());
    EXPECT_EQ(in.last_rank, arr.back().second);
    EXPECT_EQ(in.late_by_ns, arr.back().first - arr[arr.size() - 2].first);
    EXPECT_EQ(in.spread_ns, arr.back().first - arr.front().first);
    ++checked;
  }
  EXPECT_EQ(checked, 51u);
  // Rank 3's all-gather count differs from the first rank's (and only rank 3's: the ranks after it are
  // compared with rank 0, not with the fewest so far).
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0].code, StragglerNote::Code::CountsDiffer);
  EXPECT_EQ(s.notes[0].rank, 3);
  EXPECT_EQ(s.notes[0].here, 39u);
  EXPECT_EQ(s.notes[0].there, 40u);
}

TEST(InstanceTable, RanksOnClocksNotAnchoredToOneAnotherHaveNoStraggler) {
  // Rank 1's arrivals are on its raw clock, the others' on the wall clock: no lateness between them is real.
  std::vector<RankArrivals> ranks = run(4, 7);
  ranks[1].clock_mapped = false;
  InstanceTable t;
  for (const RankArrivals& a : ranks) t.add(a);
  const Stragglers s = t.stragglers();
  EXPECT_EQ(s.not_applicable, StragglersNa::ClocksNotAnchored);
  EXPECT_TRUE(s.instances.empty());
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0].code, StragglerNote::Code::SomeUnmapped);
  EXPECT_EQ(s.notes[0].ranks, std::vector<int>{1});
  // With every rank unmapped they share no wall clock either, but ranks of one machine share the raw one:
  // compared, with a note.
  for (RankArrivals& a : ranks) a.clock_mapped = false;
  InstanceTable raw;
  for (const RankArrivals& a : ranks) raw.add(a);
  EXPECT_EQ(raw.stragglers().not_applicable, StragglersNa::None);
}

TEST(InstanceTable, AnyGroupingAndOrderGivesTheSameTable) {
  const std::vector<RankArrivals> ranks = run(9, 11);
  InstanceTable all;
  for (const RankArrivals& a : ranks) all.add(a);
  const Stragglers expected = all.stragglers();
  for (uint32_t seed : {1u, 2u, 3u, 4u}) {
    std::vector<RankArrivals> shuffled = ranks;
    std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(seed));
    // Three workers' tables, merged right to left.
    InstanceTable part[3];
    for (size_t i = 0; i < shuffled.size(); ++i) part[i % 3].add(shuffled[i]);
    part[1].merge(part[2]);
    part[0].merge(part[1]);
    expect_same(part[0].stragglers(), expected);
    expect_same(part[0].links(), all.links());
  }
}

TEST(InstanceTable, ALatePeerIsTheFirstOfTheRanksThatArrivedLast) {
  InstanceTable t;
  for (int r = 0; r < 4; ++r) {
    RankArrivals a;
    a.key = {r, uint64_t(r)};
    a.wall_start[CollectiveKind::AllGather] = {r == 0   ? 100
                                               : r >= 2 ? 900
                                                        : 500};  // ranks 2 and 3 arrive last together
    t.add(a);
  }
  RankPrefetch p;
  StepPrefetch& s = p.steps.emplace_back();
  UnitPrefetch u;
  u.all_gather_ordinal = 0, u.all_gather_wall_ns = 100;
  u.ag_ns = 1000, u.exposed_wait_ns = 700, u.cause = Cause::LongerThanCompute;
  s.units.push_back(u);
  t.name_late_peers(p, {0, 0});
  EXPECT_EQ(p.steps[0].units[0].late_peer, 2);
  EXPECT_EQ(p.steps[0].units[0].late_peer_ns, 800);
  EXPECT_EQ(p.steps[0].units[0].cause, Cause::LatePeer);  // 800 >= 0.5 x 700
  // Rank 2 itself arrived last: no late peer.
  RankPrefetch q = p;
  q.steps[0].units[0] = u;
  q.steps[0].units[0].all_gather_wall_ns = 900;
  t.name_late_peers(q, {2, 2});
  EXPECT_EQ(q.steps[0].units[0].late_peer, -1);
}

}  // namespace
}  // namespace shardscope::metrics

namespace shardscope::metrics {
namespace {

// The link's time per instance is the fastest rank's kernel time, worked out here from every rank at once;
// only the instances every rank has count, and bandwidth only over the sized ones.
TEST(InstanceTable, LinksTimeEachInstanceByItsFastestRank) {
  const std::vector<RankArrivals> ranks = run(6, 5);
  InstanceTable t;
  for (const RankArrivals& a : ranks) t.add(a);
  const std::vector<LinkStats> links = t.links();
  ASSERT_EQ(links.size(), 2u);
  for (const LinkStats& l : links) {
    const size_t n = l.kind == CollectiveKind::AllGather ? 39 : 12;  // rank 3 has 39 all-gathers
    EXPECT_EQ(l.instances, n);
    int64_t fastest = 0, sized_fastest = 0, bytes = 0;
    for (size_t i = 0; i < n; ++i) {
      int64_t f = INT64_MAX;
      for (const RankArrivals& a : ranks) f = std::min(f, a.size.at(l.kind)[i].dur_ns);
      fastest += f;
      if (ranks[0].size.at(l.kind)[i].bytes != model::kUnknown)
        sized_fastest += f, bytes += ranks[0].size.at(l.kind)[i].bytes;
    }
    EXPECT_EQ(l.fastest_ns, fastest);
    EXPECT_EQ(l.sized_fastest_ns, sized_fastest);
    EXPECT_EQ(l.bytes, bytes);
    ASSERT_TRUE(l.busbw_gbps().has_value());
    EXPECT_DOUBLE_EQ(*l.algbw_gbps(), double(bytes) / double(sized_fastest));
    EXPECT_DOUBLE_EQ(*l.busbw_gbps(), double(bytes) * 0.75 / double(sized_fastest));  // (n-1)/n at n = 4
  }
  // A rank's own time against the link's: only where every rank has the same number of instances.
  EXPECT_FALSE(t.fastest_time(CollectiveKind::AllGather, 40).has_value());
  EXPECT_FALSE(t.fastest_time(CollectiveKind::AllGather, 39).has_value());
  ASSERT_TRUE(t.fastest_time(CollectiveKind::ReduceScatter, 12).has_value());
  EXPECT_EQ(*t.fastest_time(CollectiveKind::ReduceScatter, 12), links[1].fastest_ns);
}

// Two ranks, one all-gather each: 100 µs on rank 0, 150 µs on rank 1 (which waited 50 µs for rank 0).
TEST(InstanceTable, AWaitShareIsTheTimeBeyondTheFastestRank) {
  InstanceTable t;
  for (int r = 0; r < 2; ++r) {
    RankArrivals a;
    a.key = {r, uint64_t(r)};
    a.wall_start[CollectiveKind::AllGather] = {r == 0 ? 1000 : 950};
    a.size[CollectiveKind::AllGather] = {{r == 0 ? 100'000 : 150'000, 8'000'000, 2}};
    t.add(a);
  }
  ASSERT_EQ(t.fastest_time(CollectiveKind::AllGather, 1), 100'000);
  CollectiveStats slow;
  slow.kind = CollectiveKind::AllGather, slow.count = 1, slow.time_ns = 150'000;
  slow.link_ns = t.fastest_time(CollectiveKind::AllGather, 1);
  EXPECT_NEAR(*slow.wait_pct(), 100.0 / 3.0, 1e-9);
  const std::vector<LinkStats> links = t.links();
  ASSERT_EQ(links.size(), 1u);
  EXPECT_DOUBLE_EQ(*links[0].algbw_gbps(), 80.0);  // 8 MB in 100 µs
  EXPECT_DOUBLE_EQ(*links[0].busbw_gbps(), 40.0);  // x (2-1)/2
  // One rank alone has no link apart from itself.
  InstanceTable one;
  RankArrivals a;
  a.wall_start[CollectiveKind::AllGather] = {1};
  a.size[CollectiveKind::AllGather] = {{5, 10, 1}};
  one.add(a);
  EXPECT_TRUE(one.links().empty());
  EXPECT_FALSE(one.fastest_time(CollectiveKind::AllGather, 1).has_value());
}

}  // namespace
}  // namespace shardscope::metrics

namespace shardscope::metrics {
namespace {

KeyedArrival keyed(CollectiveKind kind, const char* group, int64_t seq, int64_t wall) {
  return {{kind, group, true, seq}, wall, {10, 100, 2}};
}

// Rank 1's trace starts one collective late: it holds sequence numbers 1-4 where rank 0 holds 0-4. By
// position its first all-gather would be taken for rank 0's first; by sequence number it is rank 0's second.
// Rank 1 arrives 5 ns after rank 0 at every instance they share.
TEST(InstanceTable, ARankWhoseTraceStartsOneCollectiveLatePairsBySequenceNumber) {
  RankArrivals r0, r1;
  r0.key = {0, 0}, r1.key = {1, 1};
  for (int64_t seq = 0; seq < 5; ++seq) r0.keyed.push_back(keyed(CollectiveKind::AllGather, "0", seq, 1000 * seq));
  for (int64_t seq = 1; seq < 5; ++seq) r1.keyed.push_back(keyed(CollectiveKind::AllGather, "0", seq, 1000 * seq + 5));
  InstanceTable t;
  t.add(r0), t.add(r1);
  const Stragglers s = t.stragglers();
  EXPECT_EQ(s.pairing, Pairing::Sequence);
  ASSERT_EQ(s.instances.size(), 4u);  // seq 0 is rank 0's alone
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.instances[i].ordinal, i + 1);
    EXPECT_TRUE(s.instances[i].by_seq);
    EXPECT_EQ(s.instances[i].last_rank, 1);
    EXPECT_EQ(s.instances[i].late_by_ns, 5);
  }
  // The same arrivals paired by position say rank 1 is 1,005 ns late at every instance (a whole collective).
  RankArrivals p0 = r0, p1 = r1;
  for (RankArrivals* p : {&p0, &p1}) {
    for (const KeyedArrival& a : p->keyed) p->wall_start[CollectiveKind::AllGather].push_back(a.wall_ns);
    p->keyed.clear();
  }
  InstanceTable by_place;
  by_place.add(p0), by_place.add(p1);
  const Stragglers wrong = by_place.stragglers();
  EXPECT_EQ(wrong.pairing, Pairing::Position);
  ASSERT_EQ(wrong.instances.size(), 4u);
  EXPECT_EQ(wrong.instances[0].last_rank, 1);
  EXPECT_EQ(wrong.instances[0].late_by_ns, 1005);
}

// Two process groups (say data-parallel "dp" and tensor-parallel "tp") whose collectives the two ranks issue
// in different interleavings: each instance is its group's sequence number, whatever the order on a rank.
TEST(InstanceTable, TwoProcessGroupsInterleavedDifferentlyPairByGroup) {
  RankArrivals r0, r1;
  r0.key = {0, 0}, r1.key = {1, 1};
  // Rank 0: dp0 tp0 dp1 tp1; rank 1: tp0 tp1 dp0 dp1 (rank 1 is 7 ns late on dp, rank 0 3 ns late on tp).
  r0.keyed = {keyed(CollectiveKind::AllReduce, "dp", 0, 100), keyed(CollectiveKind::AllReduce, "tp", 0, 200),
              keyed(CollectiveKind::AllReduce, "dp", 1, 300), keyed(CollectiveKind::AllReduce, "tp", 1, 400)};
  r1.keyed = {keyed(CollectiveKind::AllReduce, "tp", 0, 197), keyed(CollectiveKind::AllReduce, "tp", 1, 397),
              keyed(CollectiveKind::AllReduce, "dp", 0, 107), keyed(CollectiveKind::AllReduce, "dp", 1, 307)};
  InstanceTable t;
  t.add(r1), t.add(r0);
  const Stragglers s = t.stragglers();
  ASSERT_EQ(s.instances.size(), 4u);
  std::map<int, int64_t> late;  // rank -> total lateness
  for (const StragglerInstance& in : s.instances) late[in.last_rank] += in.late_by_ns;
  EXPECT_EQ(late[1], 14);  // dp 0 and 1
  EXPECT_EQ(late[0], 6);   // tp 0 and 1
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_EQ(s.ranks[0].times_last, 2u);
  EXPECT_EQ(s.ranks[1].times_last, 2u);
  // A group smaller than the run is complete with its own ranks: a third rank outside "dp" and "tp".
  RankArrivals r2;
  r2.key = {2, 2};
  r2.keyed = {keyed(CollectiveKind::AllGather, "other", 0, 50)};
  t.add(r2);
  EXPECT_EQ(t.stragglers().instances.size(), 4u);  // dp and tp (group size 2) still matched; "other" has one rank of 2
}

}  // namespace
}  // namespace shardscope::metrics
