// The "FSDP units" rows (viewer/model/fsdp_units.h): derived from a hand-built rank (which events a unit's
// row holds, in unit order, named by the trace, in lanes; no group for a rank without units) and from the
// real H100 trainer trace in tests/data (its 13 units, each row holding exactly that unit's all-gathers),
// and how the rows take part in the arrangement (their group, folds, pins, hides) and hit tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "analyzer/analysis/run.h"
#include "tracer/format/keys.h"
#include "viewer/model/fsdp_units.h"
#include "viewer/model/row_arrangement.h"
#include "viewer/model/summary_lane.h"

namespace shardscope::viewer {
namespace {

namespace k = keys;
using model::CollectiveKind;
using model::IntervalClass;

model::Event ev(model::Rank& r, const char* name, const char* cat, int64_t ts, int64_t dur, int unit, IntervalClass cls,
                CollectiveKind coll = CollectiveKind::None) {
  model::Event e;
  e.name = r.strings.intern(name);
  e.cat = r.strings.intern(cat);
  e.ts_ns = ts;
  e.dur_ns = dur;
  e.unit = unit;
  e.cls = cls;
  e.coll = coll;
  return e;
}

// A CPU trainer rank with units 1 and 2 (unit 2's events come first in the file): forward and backward
// compute on the compute thread, all-gathers and reduce-scatters on the communication track; unit 2's
// backward all-gather overlaps its own reduce-scatter's predecessor, so unit 1 needs two lanes. Noise: a
// prefetch instant and an untagged range.
model::Trace cpu_run() {
  model::Trace trace;
  model::Rank& r = trace.ranks.emplace_back();
  r.rank = 0;
  using C = IntervalClass;
  model::Track compute{0, 1, "compute", model::TrackKind::HostThread, {}};
  compute.events = {ev(r, k::kForwardPhase, k::kCatPhase, 0, 400, -1, C::Host),
                    ev(r, k::kUnitForward, k::kCatCompute, 100, 50, 1, C::Compute),
                    ev(r, k::kUnitForward, k::kCatCompute, 200, 50, 2, C::Compute),
                    ev(r, k::kUnitBackward, k::kCatCompute, 300, 50, 2, C::Compute),
                    ev(r, k::kUnitBackward, k::kCatCompute, 360, 50, 1, C::Compute)};
  model::Event prefetch = ev(r, k::kPrefetch, k::kCatFsdp, 310, 0, 1, C::Host);
  prefetch.ph = 'i';
  compute.events.push_back(prefetch);
  model::Track comm{0, 2, "comm: all-gather", model::TrackKind::Communication, {}};
  comm.events = {ev(r, k::kAllGather, k::kCatComm, 50, 40, 2, C::Communication, CollectiveKind::AllGather),
                 ev(r, k::kAllGather, k::kCatComm, 90, 10, 1, C::Communication, CollectiveKind::AllGather),
                 ev(r, k::kAllGather, k::kCatComm, 280, 15, 2, C::Communication, CollectiveKind::AllGather),
                 ev(r, k::kAllGather, k::kCatComm, 330, 40, 1, C::Communication, CollectiveKind::AllGather),
                 ev(r, k::kReduceScatter, k::kCatComm, 355, 30, 2, C::Communication, CollectiveKind::ReduceScatter),
                 ev(r, k::kReduceScatter, k::kCatComm, 415, 30, 1, C::Communication, CollectiveKind::ReduceScatter)};
  r.tracks.push_back(std::move(compute));
  r.tracks.push_back(std::move(comm));
  r.finalize();
  return trace;
}

const model::Event& at(const model::Rank& r, model::EventRef ref) { return r.tracks[ref.track].events[ref.index]; }

TEST(ViewerFsdpUnits, OneRowPerUnitInUnitOrderWithItsCollectivesAndCompute) {
  model::Trace trace = cpu_run();
  const model::Rank& r = trace.ranks[0];
  std::vector<DerivedRow> rows = fsdp_unit_rows(r);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].label, "unit 1");
  EXPECT_EQ(rows[1].label, "unit 2");
  for (size_t u = 0; u < rows.size(); ++u) {
    const DerivedRow& row = rows[u];
    EXPECT_EQ(row.group, RowGroup::FsdpUnits);
    // Two all-gathers, one reduce-scatter, forward and backward compute: five events, all of this unit.
    ASSERT_EQ(row.refs.size(), 5u) << row.label;
    std::multiset<std::string_view> names;
    for (model::EventRef ref : row.refs) {
      EXPECT_EQ(at(r, ref).unit, int(u + 1));
      names.insert(r.str(at(r, ref).name));
    }
    EXPECT_EQ(names, (std::multiset<std::string_view>{k::kAllGather, k::kAllGather, k::kReduceScatter, k::kUnitForward,
                                                      k::kUnitBackward}));
    EXPECT_TRUE(std::is_sorted(row.refs.begin(), row.refs.end(),
                               [&](model::EventRef a, model::EventRef b) { return at(r, a).ts_ns < at(r, b).ts_ns; }));
  }
  // Unit 1's backward all-gather [330, 370) overlaps its backward compute [360, 410): a second lane.
  EXPECT_EQ(rows[0].index.lanes.size(), 2u);
  EXPECT_EQ(rows[1].index.lanes.size(), 1u);
}

TEST(ViewerFsdpUnits, DeviceTimeComputePreferredAndUnitsNamedByTheTrace) {
  model::Trace trace = cpu_run();
  model::Rank& r = trace.ranks[0];
  r.set_run_config(
      {{k::kCfgUnits, {{{k::kCfgUnitId, 1}, {k::kName, "block0"}}, {{k::kCfgUnitId, 2}, {k::kName, "block1"}}}}});
  // The importers' device-time unit ranges (cat "fsdp"): they replace the host ranges, as in the prefetch check.
  model::Track derived{-1, -1, "FSDP units (device time)", model::TrackKind::HostThread, {}};
  derived.events = {ev(r, k::kUnitForward, k::kCatFsdp, 105, 60, 1, IntervalClass::Host)};
  r.tracks.push_back(std::move(derived));
  std::vector<DerivedRow> rows = fsdp_unit_rows(r);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].label, "unit 1 · block0");
  EXPECT_EQ(rows[1].label, "unit 2 · block1");
  size_t host_compute = 0, device_compute = 0;
  for (const DerivedRow& row : rows)
    for (model::EventRef ref : row.refs)
      if (at(r, ref).cls != IntervalClass::Communication) (ref.track == 2 ? device_compute : host_compute)++;
  EXPECT_EQ(host_compute, 0u);
  EXPECT_EQ(device_compute, 1u);

  model::Rank plain;
  plain.shape.units = {{0, "root", {}, {}}, {1, "blocks.0", {}, {}}};  // as the Kineto importer names them
  EXPECT_EQ(unit_label(plain, 1), "unit 1 · blocks.0");
  EXPECT_EQ(unit_label(plain, 5), "unit 5");
}

TEST(ViewerFsdpUnits, ARankWithoutUnitsGetsNoGroup) {
  model::Trace trace = cpu_run();
  for (model::Track& t : trace.ranks[0].tracks)
    for (model::Event& e : t.events) e.unit = -1;
  EXPECT_TRUE(fsdp_unit_rows(trace.ranks[0]).empty());
  TimelineLayout layout(trace);
  RowArrangement a(layout);
  for (const Row& row : a.rows()) {
    EXPECT_NE(row.kind, RowKind::Derived);
    EXPECT_EQ(row.label.find("FSDP units"), std::string::npos) << row.label;
  }
}

TEST(ViewerFsdpUnits, RowsTakePartInTheArrangement) {
  model::Trace trace = cpu_run();
  TimelineLayout layout(trace);
  RowArrangement a(layout);
  const int group = a.find("0/group/FSDP units");
  ASSERT_GE(group, 0);
  EXPECT_EQ(a.rows()[size_t(group)].label, "FSDP units (2)");
  EXPECT_FALSE(a.collapsed(a.rows()[size_t(group)]));  // open by default
  const int u1 = a.find("0/FSDP units/unit 1");
  ASSERT_GE(u1, 0);
  EXPECT_EQ(a.rows()[size_t(u1)].kind, RowKind::Derived);
  EXPECT_EQ(a.rows()[size_t(u1 + 1)].label, "unit 2");

  // A hit in a unit row is the real event on its own track.
  const Row& row = a.rows()[size_t(u1)];
  std::optional<model::EventRef> hit = layout.row_hit(row, 0, 95, 0);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->track, 1u);
  EXPECT_EQ(trace.ranks[0].str(at(trace.ranks[0], *hit).name), k::kAllGather);
  EXPECT_EQ(at(trace.ranks[0], *hit).unit, 1);

  // Folded: one summary lane made of the units' events.
  a.toggle(a.rows()[size_t(group)]);
  EXPECT_LT(a.find("0/FSDP units/unit 1"), 0);
  std::vector<uint32_t> derived;
  for (uint32_t m : a.members(a.rows()[size_t(a.find("0/group/FSDP units"))]))
    derived.push_back(uint32_t(layout.rows()[m].item));
  EXPECT_EQ(derived, (std::vector<uint32_t>{0, 1}));
  std::vector<Mark> marks;
  summary_marks(layout.ranks()[0], {}, Viewport::fit(0, 500, 500), marks, derived);
  ASSERT_FALSE(marks.empty());
  EXPECT_NEAR(marks.front().x0, 50, 1);  // unit 2's first all-gather starts the lane
  a.toggle(a.rows()[size_t(a.find("0/group/FSDP units"))]);

  // Pin, hide, move within the group, saved and restored by key.
  a.set_pinned(a.rows()[size_t(a.find("0/FSDP units/unit 2"))], true);
  EXPECT_EQ(a.pinned_count(), 1u);
  EXPECT_EQ(a.rows()[0].label, "r0 · unit 2");
  a.set_pinned(a.rows()[0], false);
  ASSERT_TRUE(a.move(a.find("0/FSDP units/unit 2"), a.find("0/FSDP units/unit 1")));
  EXPECT_LT(a.find("0/FSDP units/unit 2"), a.find("0/FSDP units/unit 1"));
  a.hide(a.rows()[size_t(a.find("0/FSDP units/unit 1"))]);
  EXPECT_LT(a.find("0/FSDP units/unit 1"), 0);
  EXPECT_EQ(a.rows()[size_t(a.find("0/group/FSDP units"))].label, "FSDP units (2), 1 hidden");
  RowArrangement b(layout);
  ASSERT_TRUE(b.restore(a.save()));
  EXPECT_LT(b.find("0/FSDP units/unit 1"), 0);
  a.set_filter("UNIT 2");
  EXPECT_GE(a.find("0/FSDP units/unit 2"), 0);
}

// The all-gathers of each unit in `r`, from a plain scan: events of class `cls` with a collective kind.
std::map<int, std::set<std::pair<uint32_t, uint32_t>>> gathers_by_unit(const model::Rank& r, IntervalClass cls) {
  std::map<int, std::set<std::pair<uint32_t, uint32_t>>> out;
  for (uint32_t t = 0; t < r.tracks.size(); ++t)
    for (uint32_t i = 0; i < r.tracks[t].events.size(); ++i)
      if (const model::Event& e = r.tracks[t].events[i];
          e.cls == cls && e.coll == CollectiveKind::AllGather && e.unit >= 0 && e.ph == 'X')
        out[e.unit].insert({t, i});
  return out;
}

// Each row holds its unit's events only, exactly the all-gathers `gathers` gives for it, and compute.
void check_rows(const model::Rank& r, const std::vector<DerivedRow>& rows,
                std::map<int, std::set<std::pair<uint32_t, uint32_t>>> gathers) {
  ASSERT_EQ(rows.size(), gathers.size());
  size_t u = 0;
  for (const auto& [unit, expected] : gathers) {
    const DerivedRow& row = rows[u++];
    EXPECT_EQ(row.label.rfind("unit " + std::to_string(unit), 0), 0u) << row.label;
    std::set<std::pair<uint32_t, uint32_t>> in_row;
    size_t compute = 0;
    for (model::EventRef ref : row.refs) {
      const model::Event& e = at(r, ref);
      EXPECT_EQ(e.unit, unit);
      if (e.coll == CollectiveKind::AllGather) in_row.insert({ref.track, ref.index});
      compute += e.coll == CollectiveKind::None;
    }
    EXPECT_FALSE(in_row.empty()) << row.label;
    EXPECT_EQ(in_row, expected) << row.label;
    EXPECT_GT(compute, 0u) << row.label;  // forward and backward compute
  }
}

analysis::AnalysedRun load(const std::string& path) {
  return analysis::analyse_run({std::string(SHARDSCOPE_SOURCE_DIR) + "/" + path}, {});
}

// The real trainer trace (one H100 rank, FULL_SHARD, 12 blocks and the root; one rank, so its collectives
// launched no NCCL kernel and the host ranges are the all-gathers): 13 unit rows, named by its run_config.
TEST(ViewerFsdpUnits, H100TrainerTrace) {
  analysis::AnalysedRun run = load("tests/data/h100_shardscope/train_small_full_shard.rank0.json.gz");
  ASSERT_EQ(run.trace.ranks.size(), 1u);
  const model::Rank& r = run.trace.ranks[0];
  std::vector<DerivedRow> rows = fsdp_unit_rows(r);
  ASSERT_EQ(rows.size(), 13u);
  EXPECT_EQ(rows[0].label, "unit 0 · root");
  EXPECT_EQ(rows[1].label, "unit 1 · block0");
  EXPECT_EQ(rows[12].label, "unit 12 · block11");
  auto gathers = gathers_by_unit(r, IntervalClass::Host);
  ASSERT_EQ(gathers.size(), 13u);
  check_rows(r, rows, gathers);
  TimelineLayout layout(run.trace);
  RowArrangement a(layout);
  const int group = a.find("0/group/FSDP units");
  ASSERT_GE(group, 0);
  EXPECT_EQ(a.rows()[size_t(group)].label, "FSDP units (13)");
  EXPECT_FALSE(a.collapsed(a.rows()[size_t(group)]));
}

// The 2-rank NCCL trainer run: a unit's all-gathers are its NCCL kernels, not also the host ranges that
// issued them (each all-gather once in its row).
TEST(ViewerFsdpUnits, H100NcclTrainerRun) {
  analysis::AnalysedRun run = load("tests/data/h100_nccl2/shardscope_train_pre");
  ASSERT_EQ(run.trace.ranks.size(), 2u);
  for (const model::Rank& r : run.trace.ranks) {
    auto kernels = gathers_by_unit(r, IntervalClass::Communication);
    ASSERT_FALSE(kernels.empty());
    ASSERT_FALSE(gathers_by_unit(r, IntervalClass::Host).empty());  // the host ranges exist, and are left out
    check_rows(r, fsdp_unit_rows(r), kernels);
  }
}

// A PyTorch FSDP2 rank (Kineto): the importer numbers the units in forward order and names them by module;
// each unit's row holds its all-gather kernels, as the 13-unit trainer's rows do.
TEST(ViewerFsdpUnits, PytorchFsdp2Rank) {
  analysis::AnalysedRun run = load("tests/data/h100_nccl2/pytorch_fsdp2/rank0.json.gz");
  ASSERT_EQ(run.trace.ranks.size(), 1u);
  const model::Rank& r = run.trace.ranks[0];
  std::vector<DerivedRow> rows = fsdp_unit_rows(r);
  ASSERT_GE(rows.size(), 2u);
  EXPECT_NE(rows[1].label.find("blocks."), std::string::npos) << rows[1].label;
  for (const DerivedRow& row : rows) {
    size_t gathers = 0;
    for (model::EventRef ref : row.refs)
      gathers += at(r, ref).coll == CollectiveKind::AllGather && at(r, ref).cls == IntervalClass::Communication;
    EXPECT_GT(gathers, 0u) << row.label;
  }
}

}  // namespace
}  // namespace shardscope::viewer
