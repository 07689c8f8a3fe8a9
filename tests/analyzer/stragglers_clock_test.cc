// Stragglers across machines: each rank's monotonic clock starts anywhere, so arrivals are compared after
// mapping each rank onto the wall clock through its own (monotonic, realtime) clock_sync pairs.
#include <gtest/gtest.h>

#include <fstream>

#include "analyzer/metrics/clock_map.h"
#include "analyzer/metrics/collectives.h"
#include "plugins/load/load.h"
#include "tests/analyzer/trainer_trace.h"
#include "tests/support/temp_dir.h"

using namespace shardscope;

namespace {

constexpr int64_t kWall = 1'700'000'000'000'000'000;  // some realtime
constexpr int64_t kLate = 1'234;                      // rank 1 arrives this much later, on the wall clock
constexpr int64_t kHour = 3'600'000'000'000;

// The same run on two machines: rank 1's monotonic clock reads 600 ms less than rank 0's (a different
// boot time) and its wall-clock pairs put each of its instants kLate after rank 0's.
// `with_pairs`: how many ranks, from rank 0, carry their clock pairs.
model::Trace two_machines(int with_pairs) {
  test::TempDir dir;
  std::vector<std::filesystem::path> files;
  for (int r = 0; r < 2; ++r) {
    test::TrainerTraceOptions o;
    o.rank = r;
    const int64_t boot = r == 0 ? 0 : -600'000'000;
    o.t0_ns = 1'000'000'000 + boot;
    const int64_t offset = kWall - boot + (r == 1 ? kLate : 0);  // realtime − monotonic
    if (r < with_pairs)
      o.clock_pairs = {{o.t0_ns - 1'000, o.t0_ns - 1'000 + offset}, {o.t0_ns + kHour, o.t0_ns + kHour + offset}};
    files.push_back(dir.path() / ("trace.rank" + std::to_string(r) + ".json"));
    test::write_trainer_trace(files.back(), o);
  }
  return plugins::load(files).trace;
}

TEST(ClockMap, InterpolatesBetweenPairsAndHoldsTheOffsetOutside) {
  metrics::ClockMap m({{2000, 12'000}, {0, 10'000}});  // offset 10,000 at 0, 10,000 at 2000 ...
  EXPECT_EQ(m.to_realtime(1000), 11'000);
  metrics::ClockMap drift({{0, 1000}, {1000, 3000}});  // ... offset 1000, then 2000: the clocks drift
  EXPECT_EQ(drift.to_realtime(500), 500 + 1500);
  EXPECT_EQ(drift.to_realtime(-100), -100 + 1000);
  EXPECT_EQ(drift.to_realtime(5000), 5000 + 2000);
  EXPECT_EQ(metrics::ClockMap({}).to_realtime(42), 42);
}

TEST(Stragglers, ComparedOnTheWallClockAcrossMachines) {
  model::Trace t = two_machines(2);
  ASSERT_EQ(t.ranks.size(), 2u);
  ASSERT_EQ(t.ranks[1].clock_sync.size(), 2u);
  metrics::Stragglers s = metrics::find_stragglers(t);
  ASSERT_EQ(s.not_applicable, metrics::StragglersNa::None);
  ASSERT_FALSE(s.instances.empty());
  for (const metrics::StragglerInstance& i : s.instances) {
    EXPECT_EQ(i.last_rank, 1);
    EXPECT_EQ(i.late_by_ns, kLate);
  }
  EXPECT_EQ(s.ranks[1].times_last, s.instances.size());
  EXPECT_EQ(s.ranks[1].max_late_by_ns, kLate);
  EXPECT_TRUE(s.notes.empty());
}

TEST(Stragglers, OnTheRawClocksTheAnswerIsWrong) {
  // Unmapped, rank 1's clock reads 600 ms early: rank 0 looks like the straggler, by 600 ms.
  metrics::Stragglers s = metrics::find_stragglers(two_machines(0));
  ASSERT_FALSE(s.instances.empty());
  for (const metrics::StragglerInstance& i : s.instances) {
    EXPECT_EQ(i.last_rank, 0);
    EXPECT_EQ(i.late_by_ns, 600'000'000);
  }
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0].code, metrics::StragglerNote::Code::NoClockSync);
}

TEST(Stragglers, ARankWithoutPairsAgainstRanksWithThemIsNotAnchoredAndGetsNoStraggler) {
  // Rank 1's raw clock against rank 0's wall clock: the "lateness" would be the clocks' offset.
  metrics::Stragglers s = metrics::find_stragglers(two_machines(1));
  EXPECT_EQ(s.not_applicable, metrics::StragglersNa::ClocksNotAnchored);
  EXPECT_TRUE(s.instances.empty());
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0].code, metrics::StragglerNote::Code::SomeUnmapped);
  EXPECT_EQ(s.notes[0].ranks, std::vector<int>{1});
}

// A clock pair is read as integers. A whole-valued float is read exactly, and one beyond int64 is left out.
// Converting such a value to int64 is undefined behaviour, and the fuzzer found that before this test did.
TEST(ClockSync, PairsBeyondInt64AreIgnoredWholeFloatsAreKept) {
  test::TempDir dir;
  auto load_with = [&](const std::string& mono, const std::string& real) {
    std::filesystem::path f = dir.path() / "rank0.json";
    std::ofstream(f) << R"({"shardscope":{"schema_version":1,"rank":0,"world_size":1,"clock":{"sync":{"monotonic_ns":)"
                     << mono << R"(,"realtime_ns":)" << real << R"(}}},"traceEvents":[]})";
    return plugins::load({f}).trace;
  };
  model::Trace kept = load_with("1000.0", "2e18");
  ASSERT_EQ(kept.ranks.size(), 1u);
  ASSERT_EQ(kept.ranks[0].clock_sync.size(), 1u);
  EXPECT_EQ(kept.ranks[0].clock_sync[0].trace_ns, 1000);
  EXPECT_EQ(kept.ranks[0].clock_sync[0].realtime_ns, 2'000'000'000'000'000'000);
  for (const char* huge : {"1e300", "-1e19", "9.3e18"}) {
    model::Trace t = load_with("0", huge);
    ASSERT_EQ(t.ranks.size(), 1u);
    EXPECT_TRUE(t.ranks[0].clock_sync.empty()) << huge;
    EXPECT_TRUE(load_with(huge, "0").ranks[0].clock_sync.empty()) << huge;
  }
}

}  // namespace
