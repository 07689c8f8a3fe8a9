// The tracer's threads working at once: traced threads filling their buffers past a chunk while the flusher
// drains them every millisecond, flush() and track() from other threads, threads exiting mid-session, and
// threads recording across a stop and a start. Checked for lost records here; scripts/sanitize runs it under
// ThreadSanitizer, where an unordered access between these threads fails it.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.h"
#include "tracer/format/reader.h"
#include "tracer/tracer.h"

namespace shardscope::tracer {
namespace {

TEST(Concurrency, ThreadsRecordWhileTheFlusherDrainsAndNothingIsLost) {
  test::TempDir dir;
  auto path = dir.path() / "busy.json";
  constexpr int kThreads = 4;
  constexpr int kPerThread = 3 * ThreadBuffer::kChunkRecords + 7;  // crosses chunk boundaries mid-drain
  start({.path = path, .flush_interval = std::chrono::milliseconds(1)});
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t)
    workers.emplace_back([t] {
      name_this_thread("worker " + std::to_string(t));
      uint32_t side = track("side " + std::to_string(t));
      for (int i = 0; i < kPerThread; ++i) {
        Range r("work", {{"thread", t}, {"i", i}});
        if (i % 100 == 0) complete(side, intern("side " + std::to_string(t)), "test", now_ns(), now_ns() + 1);
      }
    });  // each thread exits while the session runs: the flusher forgets its buffer after the last drain
  std::thread flusher_too([] {
    for (int i = 0; i < 50; ++i) flush();
  });
  for (auto& w : workers) w.join();
  flusher_too.join();
  EXPECT_EQ(dropped_records(), 0u);
  stop();

  trace::TraceFile f = trace::read_trace(path);
  EXPECT_FALSE(f.truncated);
  std::map<int, std::vector<int>> seen;
  for (const trace::Event& e : f.events)
    if (e.name == "work") seen[e.args["thread"].get<int>()].push_back(e.args["i"].get<int>());
  ASSERT_EQ(seen.size(), size_t(kThreads));
  for (auto& [t, is] : seen) {
    ASSERT_EQ(is.size(), size_t(kPerThread)) << "thread " << t;
    for (int i = 0; i < kPerThread; ++i) ASSERT_EQ(is[i], i) << "thread " << t << ": out of order or lost";
  }
}

// Each session lasts until every worker has recorded a whole range inside it (counted, not timed: a slowed,
// instrumented run on a busy machine may take long to get there), with a cap far beyond any real wait.
TEST(Concurrency, ThreadsKeepRecordingAcrossStopAndStart) {
  test::TempDir dir;
  constexpr int kWorkers = 2;
  std::atomic<bool> done{false};
  std::array<std::atomic<uint64_t>, kWorkers> ranges{};  // ranges each worker has closed
  std::vector<std::thread> workers;
  for (int t = 0; t < kWorkers; ++t)
    workers.emplace_back([&done, &ranges, t] {
      while (!done.load()) {
        {
          Range r("spin", {{"worker", t}});
          instant("tick");
        }
        ranges[size_t(t)].fetch_add(1);
      }
    });
  for (int session = 0; session < 3; ++session) {
    auto path = dir.path() / ("s" + std::to_string(session) + ".json");
    start({.path = path, .rank = session, .flush_interval = std::chrono::milliseconds(2)});
    // The range in progress when start() returned may have begun before it; the one after it cannot have.
    std::array<uint64_t, kWorkers> at_start{};
    for (int t = 0; t < kWorkers; ++t) at_start[size_t(t)] = ranges[size_t(t)].load();
    auto cap = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    for (int t = 0; t < kWorkers; ++t)
      while (ranges[size_t(t)].load() < at_start[size_t(t)] + 2 && std::chrono::steady_clock::now() < cap)
        std::this_thread::yield();
    stop();
    trace::TraceFile f = trace::read_trace(path);
    EXPECT_FALSE(f.truncated) << session;
    std::set<int> spinning;
    for (const trace::Event& e : f.events) {
      if (e.name == "spin") spinning.insert(e.args["worker"].get<int>());
      EXPECT_EQ(e.pid, session);
    }
    EXPECT_EQ(spinning.size(), size_t(kWorkers)) << "session " << session << " missed a running thread's ranges";
  }
  done = true;
  for (auto& w : workers) w.join();
}

}  // namespace
}  // namespace shardscope::tracer
