// The tracer's threads working at once: traced threads filling their buffers past a chunk while the flusher
// drains them every millisecond, flush() and track() from other threads, threads exiting mid-session, and
// threads recording across a stop and a start. Checked for lost records here; scripts/sanitize runs it under
// ThreadSanitizer, where an unordered access between these threads fails it.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
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

TEST(Concurrency, ThreadsKeepRecordingAcrossStopAndStart) {
  test::TempDir dir;
  std::atomic<bool> done{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < 2; ++t)
    workers.emplace_back([&done] {
      while (!done.load()) {
        Range r("spin");
        instant("tick");
      }
    });
  for (int session = 0; session < 3; ++session) {
    auto path = dir.path() / ("s" + std::to_string(session) + ".json");
    start({.path = path, .rank = session, .flush_interval = std::chrono::milliseconds(2)});
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    stop();
    trace::TraceFile f = trace::read_trace(path);
    EXPECT_FALSE(f.truncated) << session;
    size_t spins = 0;
    for (const trace::Event& e : f.events) {
      spins += e.name == "spin";
      EXPECT_EQ(e.pid, session);
    }
    EXPECT_GT(spins, 0u) << "session " << session << " saw none of the running threads' ranges";
  }
  done = true;
  for (auto& w : workers) w.join();
}

}  // namespace
}  // namespace shardscope::tracer
