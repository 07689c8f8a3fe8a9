// What reading CUPTI records costs the flusher thread: one batch of launches and their kernels (the common
// case in a training step) through the record processor and into serialized trace events.
#include <benchmark/benchmark.h>

#include "tests/cupti/records.h"
#include "tracer/cupti/record_processor.h"
#include "tracer/format/serialize.h"

namespace {

using shardscope::tracer::cupti::RecordProcessor;

void BM_LaunchAndKernel(benchmark::State& state) {
  const uint32_t n = uint32_t(state.range(0));
  shardscope::test::Records r;
  for (uint32_t i = 1; i <= n; ++i) {
    r.api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, i, 7, 1000 + 10 * i,
          1005 + 10 * i);
    r.kernel("_Z9vectorAddPfS_i", i, 0, 1, 13, 2000 + 10 * i, 2008 + 10 * i);
  }
  std::vector<const CUpti_Activity*> batch = r.batch();
  RecordProcessor p({}, [](const std::string&) { return 1u; });
  std::string out;
  for (auto _ : state) {
    p.process(batch);
    out.clear();
    for (const auto& e : p.take()) shardscope::trace::append_event(out, e);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * 2 * n);  // records
  state.counters["bytes_per_record"] = double(out.size()) / (2 * n);
}
BENCHMARK(BM_LaunchAndKernel)->Arg(10000);

}  // namespace

BENCHMARK_MAIN();
