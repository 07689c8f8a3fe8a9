// The what-if replay (metrics/whatif.h) against reading the trace it replays (issue 41's item 6: the replay of
// a rank's step should cost no more than reading it). On the trainer's H100 trace in tests/data (one rank,
// 80k events): BM_Read loads it, BM_Replay builds the graph and replays it unchanged and with BACKWARD_PRE
// off (the whole of `shardscope whatif` after the load).
// Run: build/tests/bench/whatif_bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <filesystem>

#include "analyzer/metrics/whatif.h"
#include "plugins/load/load.h"

using namespace shardscope;

namespace {

const std::filesystem::path kTrace =
    std::filesystem::path(SHARDSCOPE_DATA_DIR) / "h100_nccl2/shardscope_train_pre/trace.rank0.json.gz";

void BM_Read(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(plugins::load({kTrace}, {.threads = 1}).trace.ranks.size());
}
BENCHMARK(BM_Read)->Unit(benchmark::kMillisecond);

void BM_Replay(benchmark::State& state) {
  const model::Trace trace = plugins::load({kTrace}, {.threads = 1}).trace;
  metrics::WhatIfChange change;
  change.backward = metrics::Prefetch::None;
  for (auto _ : state) benchmark::DoNotOptimize(metrics::what_if(trace, change).predicted_step_ns);
}
BENCHMARK(BM_Replay)->Unit(benchmark::kMillisecond);

}  // namespace
