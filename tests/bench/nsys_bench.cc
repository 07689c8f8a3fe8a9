// Ingest speed and memory of the Nsight Systems importer on a generated export in the real schema (3.25's
// columns for kernels, CUDA calls and NVTX events): SHARDSCOPE_NSYS_KERNELS kernels (default 2 million), each
// launched by a cudaLaunchKernel and inside two nested PyTorch emit_nvtx ranges ("aten::linear, op_id = N"
// around "aten::mm, op_id = N"), so twice as many NVTX ranges (4 million). One process, one stream, one
// thread. The database is written once (in a child, so its memory is not counted) to the temporary folder
// and kept. Counters: events into the model per wall-clock second and per CPU-second of the process, the
// database's size, and the peak resident memory of the loading process against it.
// BM_IngestNsysProcesses/P: the same kind of export, SHARDSCOPE_NSYS_SPREAD_KERNELS kernels (default 200,000)
// dealt out round-robin among P processes (each its own pid and thread), so that 10, 1,000 and 10,000
// processes hold the same rows: the import's cost should not grow with P (issue #40).
// Run: build/tests/bench/nsys_bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "plugins/load/load.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

int64_t kernels(const char* variable = "SHARDSCOPE_NSYS_KERNELS", int64_t otherwise = 2'000'000) {
  const char* n = std::getenv(variable);
  return n ? std::max<int64_t>(1, std::atoll(n)) : otherwise;
}

// Process p's globalPid: its pid (144 + p) under the VM id 1, as a real export packs them.
constexpr int64_t kGlobalPid = 281477392629760, kTid = 144;
int64_t global_pid(int64_t p) { return kGlobalPid + (p << 24); }

void must(sqlite3* db, int rc) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    fmt::print(stderr, "generating the export: {}\n", sqlite3_errmsg(db));
    std::_Exit(1);
  }
}

void write_export(const fs::path& path, int64_t n, int64_t processes) {
  sqlite3* db = nullptr;
  must(db, sqlite3_open(path.c_str(), &db));
  must(
      db,
      sqlite3_exec(
          db,
          "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN;"
          "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
          "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, "
          "systemClockNs INTEGER);"
          "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1779782330176752435, '', '', 28254349605);"
          "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT "
          "NULL, contextId "
          "INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid "
          "INTEGER, demangledName "
          "INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, "
          "registersPerThread "
          "INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER "
          "NOT NULL, blockY INTEGER "
          "NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT "
          "NULL, "
          "localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, "
          "sharedMemoryExecuted INTEGER, "
          "graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER, qmdBulkReleaseDone INTEGER, qmdPreexitDone INTEGER, "
          "qmdLastCtaDone INTEGER, "
          "graphId INTEGER, clusterX INTEGER, clusterY INTEGER, clusterZ INTEGER, clusterSchedulingPolicy INTEGER, "
          "maxPotentialClusterSize "
          "INTEGER, maxActiveClusters INTEGER, sharedMemoryRequestedPercentage INTEGER, tensorSizeMinusOneElements "
          "TEXT NOT NULL);"
          "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER "
          "NOT NULL, globalTid "
          "INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);"
          "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, "
          "category INTEGER, "
          "color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, "
          "uint64Value INTEGER, "
          "int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId "
          "INTEGER, jsonText TEXT, "
          "binaryData TEXT);",
          nullptr, nullptr, nullptr));
  constexpr int kNames = 64;  // distinct kernels
  sqlite3_stmt *str = nullptr, *k = nullptr, *rt = nullptr, *nv = nullptr;
  must(db, sqlite3_prepare_v2(db, "INSERT INTO StringIds VALUES (?, ?)", -1, &str, nullptr));
  for (int i = 0; i <= kNames; ++i) {
    std::string v = i == kNames
                        ? "cudaLaunchKernel_v7000"
                        : fmt::format("void at::native::elementwise_kernel<128, {}>(int, at::native::Op{})", i, i);
    sqlite3_bind_int(str, 1, i + 1);
    sqlite3_bind_text(str, 2, v.c_str(), -1, SQLITE_TRANSIENT);
    must(db, sqlite3_step(str));
    sqlite3_reset(str);
  }
  must(db, sqlite3_prepare_v2(
               db,
               "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?1, ?2, 0, 1, 0, 7, ?3, ?5, ?4, ?4, ?4, 1, "
               "1, 32, 1024, 1, 1, "
               "128, 1, 1, 0, 0, 0, 250871808, ?3, 32768, NULL, 0, NULL, NULL, NULL, 0, 0, 0, 0, 1, 0, 0, NULL, '[]')",
               -1, &k, nullptr));
  must(db, sqlite3_prepare_v2(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?1, ?2, 0, ?5, ?3, ?4, 0, NULL)", -1,
                              &rt, nullptr));
  must(db, sqlite3_prepare_v2(db,
                              "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?1, "
                              "?2, 59, ?3, ?4, 0)",
                              -1, &nv, nullptr));
  auto step = [&](sqlite3_stmt* s) {
    must(db, sqlite3_step(s));
    sqlite3_reset(s);
  };
  int64_t t = 60'000'000'000;
  for (int64_t i = 0; i < n; ++i, t += 2000) {
    const int64_t pid = global_pid(i % processes), tid = pid + kTid;
    sqlite3_bind_int64(nv, 4, tid), sqlite3_bind_int64(rt, 5, tid), sqlite3_bind_int64(k, 5, pid);
    // The calls and ranges of one thread in time order, as exports write them.
    std::string outer = fmt::format("aten::linear, op_id = {}", 2 * i),
                inner = fmt::format("aten::mm, op_id = {}", 2 * i + 1);
    sqlite3_bind_int64(nv, 1, t), sqlite3_bind_int64(nv, 2, t + 1500),
        sqlite3_bind_text(nv, 3, outer.c_str(), -1, SQLITE_TRANSIENT), step(nv);
    sqlite3_bind_int64(nv, 1, t + 100), sqlite3_bind_int64(nv, 2, t + 1200),
        sqlite3_bind_text(nv, 3, inner.c_str(), -1, SQLITE_TRANSIENT), step(nv);
    sqlite3_bind_int64(rt, 1, t + 300), sqlite3_bind_int64(rt, 2, t + 900), sqlite3_bind_int64(rt, 3, i + 1),
        sqlite3_bind_int(rt, 4, kNames + 1), step(rt);
    sqlite3_bind_int64(k, 1, t + 1000), sqlite3_bind_int64(k, 2, t + 1900), sqlite3_bind_int64(k, 3, i + 1),
        sqlite3_bind_int(k, 4, int(i % kNames) + 1), step(k);
  }
  for (sqlite3_stmt* s : {str, k, rt, nv}) sqlite3_finalize(s);
  must(db, sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr));
  sqlite3_close(db);
}

fs::path generated_export(int64_t n, int64_t processes) {
  fs::path p =
      fs::temp_directory_path() / (processes == 1 ? fmt::format("shardscope_nsys_bench_{}.sqlite", n)
                                                  : fmt::format("shardscope_nsys_bench_{}_{}p.sqlite", n, processes));
  if (fs::exists(p)) return p;
  fs::path tmp = p.string() + ".tmp";
  fs::remove(tmp);
  if (pid_t child = fork(); child == 0) {
    write_export(tmp, n, processes);
    std::_Exit(0);
  } else {
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::abort();
  }
  fs::rename(tmp, p);
  return p;
}

double process_cpu() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void BM_IngestNsysExport(benchmark::State& state) {
  const fs::path file = generated_export(kernels(), 1);
  size_t events = 0;
  double wall_s = 0, cpu_s = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = process_cpu();
    plugins::LoadResult r = plugins::load({file}, {.threads = 1});
    events = r.trace.ranks.at(0).event_count();
    benchmark::DoNotOptimize(r.trace.ranks.data());
    wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cpu_s += process_cpu() - c0;
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const double db_bytes = double(fs::file_size(file)), peak = double(u.ru_maxrss) * 1024;
  state.counters["events"] = double(events);
  // The main thread's CPU time is not the work's: the importer steps SQLite on a second thread. So: events per
  // wall-clock second, and per second of the whole process's CPU (both threads).
  state.counters["events_per_wall_s"] = double(events) * double(state.iterations()) / wall_s;
  state.counters["events_per_cpu_s"] = double(events) * double(state.iterations()) / cpu_s;
  state.counters["db_MB"] = db_bytes / 1e6;
  state.counters["peak_rss_MB"] = peak / 1e6;
  state.counters["peak_over_db"] = peak / db_bytes;
}
BENCHMARK(BM_IngestNsysExport)->Unit(benchmark::kMillisecond)->Iterations(1);

// The same rows among state.range(0) processes: wall and CPU seconds of one load, and per million rows read
// (kernels, CUDA calls, and two NVTX ranges a kernel).
void BM_IngestNsysProcesses(benchmark::State& state) {
  const int64_t n = kernels("SHARDSCOPE_NSYS_SPREAD_KERNELS", 200'000), processes = state.range(0);
  const fs::path file = generated_export(n, processes);
  size_t ranks = 0, events = 0;
  double wall_s = 0, cpu_s = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = process_cpu();
    plugins::LoadResult r = plugins::load({file}, {.threads = 1});
    ranks = r.trace.ranks.size();
    events = 0;
    for (const model::Rank& rank : r.trace.ranks) events += rank.event_count();
    benchmark::DoNotOptimize(r.trace.ranks.data());
    wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cpu_s += process_cpu() - c0;
  }
  const double it = double(state.iterations()), rows = 4.0 * double(n);
  state.counters["ranks"] = double(ranks);
  state.counters["events"] = double(events);
  state.counters["wall_s"] = wall_s / it;
  state.counters["cpu_s"] = cpu_s / it;
  state.counters["wall_s_per_M_rows"] = wall_s / it / (rows / 1e6);
  state.counters["cpu_s_per_M_rows"] = cpu_s / it / (rows / 1e6);
}
BENCHMARK(BM_IngestNsysProcesses)->Arg(10)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
