// The host tracer's hot path: one scoped range, begin and end, with tracing on and off.
//
// With tracing on, a tight loop makes ranges far faster than any flusher can write JSON, so the buffers
// would fill and the loop would measure the (cheaper) drop path. Every kBatch ranges the timer pauses and
// the buffers are flushed, so each timed range really is recorded; "dropped" must stay 0.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "tracer/tracer.h"

namespace tr = shardscope::tracer;

namespace {

constexpr int64_t kBatch = 50'000;  // well under one thread's buffer bound

template <typename MakeRange>
void run_on(benchmark::State& state, const char* file, MakeRange make_range) {
  auto path = std::filesystem::temp_directory_path() / file;
  tr::start({.path = path});
  int64_t n = 0;
  for (auto _ : state) {
    make_range(n);
    if (++n % kBatch == 0) {
      state.PauseTiming();
      tr::flush();
      state.ResumeTiming();
    }
  }
  tr::flush();
  state.counters["dropped"] = double(tr::dropped_records());
  tr::stop();
  std::filesystem::remove(path);
}

}  // namespace

static void BM_RangeOff(benchmark::State& state) {
  for (auto _ : state) {
    tr::Range r("off");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_RangeOff);

static void BM_RangeOn(benchmark::State& state) {
  run_on(state, "shardscope-bench.json", [](int64_t) {
    tr::Range r("on");
    benchmark::ClobberMemory();
  });
}
BENCHMARK(BM_RangeOn)->Iterations(2'000'000);  // fixed: every recorded range is also written out

static void BM_RangeOnWithArgs(benchmark::State& state) {
  run_on(state, "shardscope-bench-args.json", [](int64_t n) {
    tr::Range r("on", {{"unit", n}, {"bytes", int64_t(4096)}});
    benchmark::ClobberMemory();
  });
}
BENCHMARK(BM_RangeOnWithArgs)->Iterations(2'000'000);
