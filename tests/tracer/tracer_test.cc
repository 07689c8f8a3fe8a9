// The host tracer end to end: record from several threads, stop, read the file back.
#include "tracer/tracer.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>

#include "tests/support/temp_dir.h"
#include "tracer/format/error.h"
#include "tracer/format/keys.h"
#include "tracer/format/reader.h"

namespace shardscope::tracer {
namespace {

using trace::Event;

const Event* find(const std::vector<Event>& events, char ph, const std::string& name) {
  for (const Event& e : events)
    if (e.ph == ph && e.name == name) return &e;
  return nullptr;
}

TEST(Tracer, RecordsRangesInstantsCountersAndMetadata) {
  test::TempDir dir;
  auto path = dir.path() / "rank2.json.gz";
  start({.path = path, .rank = 2, .world_size = 4, .run_config = {{"sharding", "full_shard"}}});
  EXPECT_TRUE(running());
  EXPECT_TRUE(enabled());
  name_this_thread("compute");
  uint32_t comm = track("comm: all-gather");
  int64_t outer_start = now_ns();
  {
    Range step("step", {{"step", 7}});
    { Range fwd("forward", {{"unit", 3}, {"bytes", int64_t(1) << 40}, {"ratio", 0.5}, {"kind", "all_gather"}}); }
    instant("prefetch", {{"unit", 2}});
    counter("memory.sharded_params", int64_t(123456789));
    counter("memory.ratio", 0.25);
    complete(comm, "all_gather", "comm", outer_start, outer_start + 5000, {{"unit", 2}});
  }
  std::thread worker([] {
    name_this_thread("worker");
    for (int i = 0; i < 2000; ++i) Range r("work");  // more than one chunk
  });
  worker.join();
  metadata({{keys::kRunConfig, {{"prefetch", "pre"}}}});
  stop();
  EXPECT_FALSE(running());
  EXPECT_FALSE(enabled());

  trace::TraceFile f = trace::read_trace(path);
  EXPECT_FALSE(f.truncated);
  EXPECT_EQ(f.shardscope[keys::kRank], 2);
  EXPECT_EQ(f.shardscope[keys::kWorldSize], 4);
  EXPECT_EQ(f.shardscope[keys::kClock][keys::kClockDomain], keys::kClockMonotonic);
  EXPECT_EQ(f.shardscope[keys::kRunConfig]["sharding"], "full_shard");
  EXPECT_EQ(f.shardscope[keys::kRunConfig]["prefetch"], "pre");  // the late patch
  for (const Event& e : f.events) EXPECT_EQ(e.pid, 2) << e.name;

  const Event* step = find(f.events, 'X', "step");
  const Event* fwd = find(f.events, 'X', "forward");
  ASSERT_TRUE(step && fwd);
  EXPECT_EQ(step->args["step"], 7);
  EXPECT_EQ(fwd->args["unit"], 3);
  EXPECT_EQ(fwd->args["bytes"], int64_t(1) << 40);
  EXPECT_EQ(fwd->args["ratio"], 0.5);
  EXPECT_EQ(fwd->args["kind"], "all_gather");
  EXPECT_LE(step->ts_ns, fwd->ts_ns);  // nesting holds on the one clock
  EXPECT_GE(step->ts_ns + step->dur_ns, fwd->ts_ns + fwd->dur_ns);
  EXPECT_EQ(step->tid, fwd->tid);

  const Event* ag = find(f.events, 'X', "all_gather");
  ASSERT_TRUE(ag);
  EXPECT_EQ(ag->tid, int64_t(comm));
  EXPECT_EQ(ag->ts_ns, outer_start);
  EXPECT_EQ(ag->dur_ns, 5000);
  ASSERT_TRUE(find(f.events, 'i', "prefetch"));
  const Event* c = find(f.events, 'C', "memory.sharded_params");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->args["value"], 123456789);
  EXPECT_EQ(find(f.events, 'C', "memory.ratio")->args["value"], 0.25);

  // Tracks are named by M events; every X event's track has one.
  std::map<int64_t, std::string> names;
  for (const Event& e : f.events)
    if (e.ph == 'M' && e.name == keys::kThreadName) names[e.tid] = e.args[keys::kName];
  EXPECT_EQ(names[step->tid], "compute");
  EXPECT_EQ(names[int64_t(comm)], "comm: all-gather");
  size_t work = 0;
  int64_t work_tid = -1;
  for (const Event& e : f.events)
    if (e.name == "work") ++work, work_tid = e.tid;
  EXPECT_EQ(work, 2000u);
  EXPECT_EQ(names[work_tid], "worker");
  ASSERT_TRUE(find(f.events, 'M', keys::kProcessName));
  EXPECT_GE(
      std::count_if(f.events.begin(), f.events.end(), [](const Event& e) { return e.name == keys::kClockSyncEvent; }),
      2);  // at start and at stop
}

TEST(Tracer, OffRecordsNothingAndRestartsCleanly) {
  test::TempDir dir;
  { Range r("before start"); }
  instant("before start");
  EXPECT_FALSE(enabled());
  for (int session = 0; session < 2; ++session) {
    auto path = dir.path() / ("s" + std::to_string(session) + ".json");
    start({.path = path, .rank = session});
    EXPECT_THROW(start({.path = path}), std::runtime_error);
    { Range r("inside"); }
    stop();
    stop();  // idempotent
    { Range r("after stop"); }
    trace::TraceFile f = trace::read_trace(path);
    EXPECT_TRUE(find(f.events, 'X', "inside"));
    EXPECT_FALSE(find(f.events, 'X', "after stop"));
    EXPECT_FALSE(find(f.events, 'X', "before start"));
  }
}

TEST(Tracer, FlushesWhileRunning) {
  test::TempDir dir;
  auto path = dir.path() / "live.json";
  start({.path = path, .flush_interval = std::chrono::milliseconds(20)});
  { Range r("early"); }
  // The file is readable mid-run: truncated (not closed yet) and, once the flusher has run (no flush() here;
  // waited for, not timed: a loaded machine may run it late), holding the early range.
  trace::TraceFile f;
  auto cap = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    try {
      f = trace::read_trace(path);
    } catch (const trace::TraceError&) {  // nothing flushed yet: not even the header
      continue;
    }
    EXPECT_TRUE(f.truncated);
  } while (!find(f.events, 'X', "early") && std::chrono::steady_clock::now() < cap);
  EXPECT_TRUE(find(f.events, 'X', "early"));
  EXPECT_TRUE(running());
  stop();
}

TEST(Tracer, UnwritablePathThrows) {
  EXPECT_THROW(start({.path = "/nonexistent-dir/x.json"}), std::runtime_error);
  EXPECT_FALSE(running());
}

TEST(Tracer, InternGivesStablePointers) {
  const char* a = intern(std::string("unit ") + "3");
  const char* b = intern("unit 3");
  EXPECT_EQ(a, b);
  EXPECT_STREQ(a, "unit 3");
}

}  // namespace
}  // namespace shardscope::tracer

namespace shardscope::tracer {
namespace {

TEST(Clock, RangeTimesLieOnCLOCK_MONOTONIC) {
  // Whatever the hot path reads (TSC or clock_gettime), the file holds CLOCK_MONOTONIC ns.
  test::TempDir dir;
  auto path = dir.path() / "clock.json";
  start({.path = path});
  std::vector<std::pair<int64_t, int64_t>> brackets;
  for (int i = 0; i < 20; ++i) {
    int64_t before = now_ns();
    { Range r("bracketed"); }
    brackets.emplace_back(before, now_ns());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop();
  trace::TraceFile f = trace::read_trace(path);
  size_t i = 0;
  for (const trace::Event& e : f.events) {
    if (e.name != "bracketed") continue;
    ASSERT_LT(i, brackets.size());
    // A microsecond of slack for the calibration samples' own uncertainty.
    EXPECT_GE(e.ts_ns, brackets[i].first - 1000) << i;
    EXPECT_LE(e.ts_ns + e.dur_ns, brackets[i].second + 1000) << i;
    ++i;
  }
  EXPECT_EQ(i, brackets.size());
}

#if defined(__x86_64__)
TEST(Clock, TscClockInterpolatesMonotonically) {
  if (!invariant_tsc()) GTEST_SKIP() << "no invariant TSC on this CPU";
  TscClock c;
  c.sample();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  c.sample();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  c.sample();
  ASSERT_EQ(c.samples(), 3u);
  int64_t last = INT64_MIN;
  for (int i = 0; i < 50; ++i) {
    // The real clock read on both sides of the tick: a preemption between the reads widens the bracket
    // instead of failing the test on a busy machine.
    int64_t before = now_ns();
    int64_t t = int64_t(__rdtsc());
    int64_t after = now_ns();
    int64_t mapped = c.to_ns(t);
    EXPECT_GE(mapped, last);
    last = mapped;
    // Extrapolated past the last sample: within 50 us of the bracket.
    EXPECT_GE(mapped, before - 50'000) << i;
    EXPECT_LE(mapped, after + 50'000) << i;
  }
}
#endif

}  // namespace
}  // namespace shardscope::tracer
