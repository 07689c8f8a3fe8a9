// The per-unit analysis as the unit count grows: a trainer-contract trace with N FSDP units (2 steps), loaded
// once, then the report's analysis of it (every metric, the prefetch check's per-unit pairs included) timed.
// Linear in units is the goal: 50,000 units in at most 1 s.
// Run: build/tests/bench/units_bench
#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>

#include "analyzer/analysis/report.h"
#include "plugins/load/load.h"
#include "tests/analyzer/trainer_trace.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

// The trace file with N units (written once, kept for the run's benchmarks).
const fs::path& file_with_units(int units) {
  static std::map<int, fs::path> files;
  auto it = files.find(units);
  if (it != files.end()) return it->second;
  const fs::path p = fs::temp_directory_path() / ("shardscope_units_bench_" + std::to_string(units) + ".json");
  test::TrainerTraceOptions o;
  o.units = units;
  o.steps = 2;
  o.memory_counters = false;
  test::write_trainer_trace(p, o);
  return files.emplace(units, p).first->second;
}

const model::Trace& trace_with_units(int units) {
  static std::map<int, model::Trace> cache;
  auto it = cache.find(units);
  if (it != cache.end()) return it->second;
  return cache.emplace(units, plugins::load({file_with_units(units)}).trace).first->second;
}

// Reading the file too: the importer's per-unit work (units table, labels, steps).
void BM_LoadAndAnalyseUnits(benchmark::State& state) {
  const fs::path& p = file_with_units(int(state.range(0)));
  for (auto _ : state) {
    model::Trace t = plugins::load({p}).trace;
    benchmark::DoNotOptimize(report::build(t, {}, {}));
  }
  state.counters["units"] = double(state.range(0));
}
BENCHMARK(BM_LoadAndAnalyseUnits)->Arg(8000)->Arg(16000)->Arg(32000)->Arg(50000)->Unit(benchmark::kMillisecond);

void BM_AnalyseUnits(benchmark::State& state) {
  const model::Trace& t = trace_with_units(int(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(report::build(t, {}, {}));
  state.counters["units"] = double(state.range(0));
  state.counters["events"] = double(t.ranks.at(0).event_count());
}
BENCHMARK(BM_AnalyseUnits)->Arg(8000)->Arg(16000)->Arg(32000)->Arg(50000)->Unit(benchmark::kMillisecond);

}  // namespace
