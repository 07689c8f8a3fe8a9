// The tracer's side of a backend: on_flush runs on the flush cadence and in flush(), before_stop runs once
// before the file closes, and what either emits lands in the file.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/support/temp_dir.h"
#include "tracer/format/keys.h"
#include "tracer/format/reader.h"
#include "tracer/tracer.h"

namespace shardscope::tracer {
namespace {

std::atomic<int> g_flushes{0};
std::atomic<int> g_stops{0};

void on_flush() {
  int n = ++g_flushes;
  emit({{'i', "flushed", "test", 0, track("backend"), now_ns(), 0, "", {{"n", n}}}});
}
void before_stop() {
  ++g_stops;
  EXPECT_TRUE(running());  // the session still takes events
  emit({{'C', "last", keys::kCatCounter, 0, 0, now_ns(), 0, "", {{keys::kValue, 42}}}});
}

TEST(BackendHooks, RunOnTheFlushCadenceAndOnceBeforeStop) {
  test::TempDir dir;
  auto path = dir.path() / "hooks.json";
  detail::set_backend_hooks({.on_flush = on_flush, .before_stop = before_stop});
  start({.path = path, .rank = 6, .flush_interval = std::chrono::milliseconds(10)});
  // Three of the flusher's own runs (no flush() yet), waited for rather than timed: a loaded machine may run
  // the flusher late, but it must run.
  auto cap = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (g_flushes.load() < 3 && std::chrono::steady_clock::now() < cap)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  int periodic = g_flushes.load();
  EXPECT_GE(periodic, 3) << "the flusher runs the hook every interval";
  flush();
  EXPECT_GT(g_flushes.load(), periodic) << "flush() runs it too";
  stop();
  stop();
  EXPECT_EQ(g_stops.load(), 1);
  detail::set_backend_hooks({});

  trace::TraceFile f = trace::read_trace(path);
  int flushed = 0, last = 0;
  for (const auto& e : f.events) {
    flushed += e.name == "flushed";
    if (e.name == "last") {
      ++last;
      EXPECT_EQ(e.args[keys::kValue], 42);
    }
    if (e.ph != 'M') {
      EXPECT_EQ(e.pid, 6) << "emit() puts the session's rank in every event";
    }
  }
  EXPECT_GE(flushed, periodic);
  EXPECT_EQ(last, 1);
}

}  // namespace
}  // namespace shardscope::tracer
