// Ingest speed of the Kineto importer: JSON bytes per second on one core (one thread, one file at a time),
// on a generated Kineto-like trace and on the real traces in tests/data; and one big file parsed on 1, 2
// and 4 threads (BM_ParseBigFile: SHARDSCOPE_BENCH_TRACE names it, e.g. one rank of scripts/gen-kineto-traces).
// BM_Limit/*: the same file walked by simdjson alone and read by the importer, and the ratio (issue #45).
// Run: build/tests/bench/ingest_bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <unistd.h>

#include "plugins/kineto/kineto_importer.h"
#include "plugins/load/load.h"
#include "plugins/load/read_text.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

// The same event mix as scripts/gen-kineto-traces, generated here so the benchmark needs nothing else.
fs::path generated_trace() {
  static fs::path path = [] {
    fs::path p = fs::temp_directory_path() / "shardscope_ingest_bench.json";
    std::ofstream out(p, std::ios::binary);
    out << R"({"schemaVersion": 1, "baseTimeNanoseconds": 1767189312000000000, "traceEvents": [)"
        << "\n";
    char buf[2048];
    double ts = 1000;
    for (int i = 1; i <= 120000; ++i, ts += 20) {
      int n = std::snprintf(
          buf, sizeof buf,
          R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4000, "tid": 4000, "ts": %.3f, "dur": 12.345, "args": {"External id": %d, "Record function id": 0, "Ev Idx": %d, "Input Dims": [[4096, 4096], [4096, 4096]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}},)"
          "\n"
          R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4000, "tid": 4000, "ts": %.3f, "dur": 4.210, "args": {"External id": %d, "cbid": 211, "correlation": %d}},)"
          "\n"
          R"({"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "pid": 0, "tid": 7, "ts": %.3f, "dur": 9.500, "args": {"External id": %d, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": %d, "registers per thread": 168, "shared memory": 213248, "blocks per SM": 0.996, "warps per SM": 11.9, "grid": [132, 1, 1], "block": [384, 1, 1], "est. achieved occupancy %%": 19}},)"
          "\n"
          R"({"ph": "s", "id": %d, "pid": 4000, "tid": 4000, "ts": %.3f, "cat": "ac2g", "name": "ac2g"},)"
          "\n",
          ts, i, i, ts + 2, i, i, ts + 8, i, i, i, ts + 2);
      out.write(buf, n);
    }
    out << R"({"ph": "i", "cat": "", "name": "Record Window End", "pid": "", "tid": "", "ts": 1.0, "s": "g"}], "distributedInfo": {"rank": 0, "world_size": 8}})"
        << "\n";
    return p;
  }();
  return path;
}

// keep_args: also keep each event's args (the viewer's loads); the counters say what the table costs.
void ingest(benchmark::State& state, const fs::path& file, bool keep_args = false) {
  if (!fs::exists(file)) {
    state.SkipWithError("trace file absent");
    return;
  }
  uint64_t bytes = 0;
  size_t events = 0, args_bytes = 0, with_args = 0, strings = 0;
  for (auto _ : state) {
    plugins::LoadResult r = plugins::load({file}, {.threads = 1, .keep_args = keep_args});
    bytes = r.json_bytes;
    events = r.trace.ranks[0].event_count();
    strings = r.trace.ranks[0].strings.size();  // args' keys and string values are interned there too
    if (const model::EventArgs* a = r.trace.args_of(0))
      args_bytes = a->memory_bytes(), with_args = a->events_with_args();
    benchmark::DoNotOptimize(r.trace.ranks.data());
  }
  state.SetBytesProcessed(int64_t(bytes) * state.iterations());
  state.counters["events"] = double(events);
  state.counters["strings"] = double(strings);
  if (keep_args) {
    state.counters["args_B_per_event"] = double(args_bytes) / double(std::max<size_t>(events, 1));
    state.counters["events_with_args"] = double(with_args);
  }
}

void BM_IngestGenerated(benchmark::State& state) { ingest(state, generated_trace()); }
BENCHMARK(BM_IngestGenerated)->Unit(benchmark::kMillisecond);
void BM_IngestGeneratedArgs(benchmark::State& state) { ingest(state, generated_trace(), true); }
BENCHMARK(BM_IngestGeneratedArgs)->Unit(benchmark::kMillisecond);

// One file parsed from memory (the read is not timed) on state.range(0) threads: what a second core buys.
void BM_ParseBigFile(benchmark::State& state) {
  const char* env = std::getenv("SHARDSCOPE_BENCH_TRACE");
  const fs::path file = env && *env ? fs::path(env) : generated_trace();
  if (!fs::exists(file)) {
    state.SkipWithError("SHARDSCOPE_BENCH_TRACE: no such file");
    return;
  }
  static plugins::FileText t;  // read once for all the runs
  static fs::path read;
  if (read != file) t = plugins::read_text(file), read = file;
  for (auto _ : state) {
    plugins::Input in{file.string(), t.data, t.size,
                      t.owner,       t.gzip, t.gzip_cut_at};  // shares the text: release() keeps it
    model::Rank r = plugins::read_kineto(std::move(in), {.threads = unsigned(state.range(0))});
    benchmark::DoNotOptimize(r.tracks.data());
  }
  state.SetBytesProcessed(int64_t(t.size) * state.iterations());
}
BENCHMARK(BM_ParseBigFile)->Unit(benchmark::kMillisecond)->ArgName("threads")->Arg(1)->Arg(2)->Arg(4)->UseRealTime();

// The same file through the loader, read included: LoadOptions::threads is the whole budget, all of it
// going to the one file's parse.
void BM_LoadBigFile(benchmark::State& state) {
  const char* env = std::getenv("SHARDSCOPE_BENCH_TRACE");
  const fs::path file = env && *env ? fs::path(env) : generated_trace();
  uint64_t bytes = 0;
  for (auto _ : state) {
    plugins::LoadResult r = plugins::load({file}, {.threads = unsigned(state.range(0))});
    bytes = r.json_bytes;
    benchmark::DoNotOptimize(r.trace.ranks.data());
  }
  state.SetBytesProcessed(int64_t(bytes) * state.iterations());
}
BENCHMARK(BM_LoadBigFile)->Unit(benchmark::kMillisecond)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();

const fs::path kShared = fs::path(SHARDSCOPE_DATA_DIR);
void BM_IngestSharedTraceDiffControl(benchmark::State& state) {
  ingest(state, kShared / "hta_trace_diff/control/control.json.gz", state.range(0));
}
BENCHMARK(BM_IngestSharedTraceDiffControl)->Unit(benchmark::kMillisecond)->ArgName("args")->Arg(0)->Arg(1);
void BM_IngestSharedNcclData(benchmark::State& state) {
  ingest(state, kShared / "hta_nccl_parser_config/nccl_data.json.gz", state.range(0));
}
BENCHMARK(BM_IngestSharedNcclData)->Unit(benchmark::kMillisecond)->ArgName("args")->Arg(0)->Arg(1);
void BM_IngestSharedB200(benchmark::State& state) {
  ingest(state, kShared / "tracelens_b200/eager_trace.json.gz", state.range(0));
}
BENCHMARK(BM_IngestSharedB200)->Unit(benchmark::kMillisecond)->ArgName("args")->Arg(0)->Arg(1);

// shardscope's own format: the trainer on an H100 with the CUPTI tracer (the reader parses args with nlohmann).
void BM_IngestSharedShardscopeH100(benchmark::State& state) {
  ingest(state, kShared / "h100_shardscope/train_small_full_shard.rank0.json.gz", state.range(0));
}
BENCHMARK(BM_IngestSharedShardscopeH100)->Unit(benchmark::kMillisecond)->ArgName("args")->Arg(0)->Arg(1);

// The limit: simdjson (ondemand) alone over the same text, every event's fields touched (ph, name, cat, ts,
// dur, pid, tid, each args key and value's type), nothing kept. The importer (one thread, text in memory) is
// measured against it; the reporter below adds the ratio of their CPU times to the importer's line.
fs::path limit_file() {
  const char* env = std::getenv("SHARDSCOPE_BENCH_TRACE");
  return env && *env ? fs::path(env) : generated_trace();
}

const plugins::FileText& limit_text() {
  static plugins::FileText t = plugins::read_text(limit_file());  // read once, not timed
  return t;
}

void BM_LimitSimdjson(benchmark::State& state) {
  const plugins::FileText& t = limit_text();
  simdjson::padded_string json(t.data, t.size);
  simdjson::ondemand::parser parser(json.size());
  size_t events = 0;
  for (auto _ : state) {
    uint64_t touched = 0;
    events = 0;
    simdjson::ondemand::document doc = parser.iterate(json);
    for (auto ev : doc["traceEvents"].get_array()) {
      ++events;
      for (auto field : ev.get_object()) {
        std::string_view k = field.unescaped_key();
        simdjson::ondemand::value v = field.value();
        if (k == "args") {
          for (auto a : v.get_object())
            touched += a.unescaped_key().value().size() + unsigned(a.value().type().value());
        } else if (k == "ts" || k == "dur") {
          double d = 0;
          touched += v.get_double().get(d) == simdjson::SUCCESS;
        } else if (k == "pid" || k == "tid") {
          int64_t i = 0;
          touched += v.get_int64().get(i) == simdjson::SUCCESS;
        } else if (k == "name" || k == "ph" || k == "cat") {
          std::string_view s;
          if (v.get_string().get(s) == simdjson::SUCCESS) touched += s.size();
        }
      }
    }
    benchmark::DoNotOptimize(touched);
  }
  state.SetBytesProcessed(int64_t(t.size) * state.iterations());  // per CPU-second: no UseRealTime
  state.counters["events"] = double(events);
}
BENCHMARK(BM_LimitSimdjson)->Name("BM_Limit/simdjson")->Unit(benchmark::kMillisecond);

void BM_LimitImporter(benchmark::State& state) {
  const plugins::FileText& t = limit_text();
  for (auto _ : state) {
    plugins::Input in{limit_file().string(), t.data, t.size, t.owner, t.gzip, t.gzip_cut_at};
    model::Rank r = plugins::read_kineto(std::move(in), {.threads = 1});
    benchmark::DoNotOptimize(r.tracks.data());
  }
  state.SetBytesProcessed(int64_t(t.size) * state.iterations());
}
BENCHMARK(BM_LimitImporter)->Name("BM_Limit/importer")->Unit(benchmark::kMillisecond);

// The console reporter, adding to BM_Limit/importer's line limit_ratio: simdjson's CPU time over the
// importer's, both as the benchmark measured them (1: the importer at the limit). It needs simdjson's line
// first, the registration order (--benchmark_enable_random_interleaving reports the importer first: no ratio).
class LimitReporter : public benchmark::ConsoleReporter {
 public:
  LimitReporter() : ConsoleReporter(isatty(1) ? OO_Defaults : OO_Tabular) {}  // no colour codes in a log
  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> out = runs;
    for (Run& r : out) {
      const std::string name = r.benchmark_name();
      const double cpu = r.GetAdjustedCPUTime();
      if (name.starts_with("BM_Limit/simdjson")) simdjson_cpu_[r.aggregate_name] = cpu;
      auto it = simdjson_cpu_.find(r.aggregate_name);
      const bool time = r.aggregate_name.empty() || r.aggregate_name == "mean" || r.aggregate_name == "median";
      if (time && name.starts_with("BM_Limit/importer") && it != simdjson_cpu_.end() && cpu > 0)
        r.counters["limit_ratio"] = it->second / cpu;
    }
    ConsoleReporter::ReportRuns(out);
  }

 private:
  std::map<std::string, double> simdjson_cpu_;  // by aggregate ("", "mean", "median"...)
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  LimitReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
