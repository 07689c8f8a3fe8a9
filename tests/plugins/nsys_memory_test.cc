// Nsight Systems' CUDA memory records (CUDA_GPU_MEMORY_USAGE_EVENTS, `--cuda-memory-usage=true`) as the
// allocator events the measured memory reads: a constructed export of two processes, whose peak and groups
// alive at the peak are worked out by hand below, and rows the reader must leave out with one warning line.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/metrics/memory_measured.h"
#include "plugins/load/load.h"
#include "tests/plugins/nsys_support.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

constexpr int64_t kSessionUtc = 1'700'000'000'000'000'000;
int64_t gpid(int64_t pid) { return (int64_t(1) << 48) | (pid << 24); }
int64_t gtid(int64_t pid, int64_t tid) { return gpid(pid) | tid; }

// Rank 0 (pid 100, GPU 0), one step [1000, 10000) on thread 1, each allocation made by a cudaMalloc call
// (correlationId) on that thread:
//   t=1100 A 100 MB inside FSDP::all_gather              -> all-gather output, alive at the peak
//   t=1500 B  40 MB in forward, freed at 6000 in backward -> activations, alive at the peak
//   t=1800 a pinned host buffer of 1 GB                   -> host memory: not the GPU's, not counted
//   t=2000 C  10 MB, freed at 2500 before backward        -> other, alive at the peak
//   peak at t=2000: 100 + 40 + 10 = 150 MB; then 140 (C freed), 40 (A freed at 3000), 0 (B freed)
//   left out, one warning: a free at t=7000 of an address never allocated, an allocation of -3 bytes at
//   7100, an operation type 7 at 7200.
// Rank 1 (pid 200, GPU 1): one allocation of 7 MB at t=1200, never freed: its peak.
void write_memory_export(const fs::path& file) {
  test::Sql db(file, true);
  db.exec("BEGIN;" + test::export_tables_sql() +
          "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER NOT NULL, deviceId "
          "INTEGER NOT NULL, contextId INTEGER NOT NULL, address INTEGER NOT NULL, pc INTEGER NOT NULL, bytes INTEGER "
          "NOT NULL, memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL, name TEXT, correlationId INTEGER, "
          "streamId INTEGER);"
          "INSERT INTO StringIds VALUES (1, 'cudaMalloc_v3020'), (2, 'cudaFree_v3020');" +
          fmt::format("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES ({}, '', '', 0);", kSessionUtc));
  for (int64_t pid : {100, 200}) {
    db.exec(fmt::format(
        "INSERT INTO PROCESSES VALUES ({0}, {1}, 'python3');"
        "INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_{1}:PID', '{1}'), ('PROCESS_{1}:ENVIRONMENT_VARIABLE', "
        "'RANK=\"{2}\"'), ('PROCESS_{1}:ENVIRONMENT_VARIABLE', 'WORLD_SIZE=\"2\"');"
        "INSERT INTO NVTX_EVENTS VALUES (1000, 10000, 59, 'ProfilerStep#1', {3}, NULL, 0);",
        gpid(pid), pid, pid == 100 ? 0 : 1, gtid(pid, 1)));
  }
  const int64_t t0 = gtid(100, 1), p0 = gpid(100);
  db.exec(
      fmt::format("INSERT INTO NVTX_EVENTS VALUES (1050, 1200, 59, 'FSDP::all_gather', {0}, NULL, 0), (5500, 5600, 59, "
                  "'autograd::engine::evaluate_function: MmBackward0', {0}, NULL, 0), (8000, 8100, 59, "
                  "'Optimizer.step#AdamW.step', {0}, NULL, 0);",
                  t0));
  struct M {
    int64_t ts, addr, bytes, kind, op, corr;
  };
  const M rows[] = {{1100, 0x1000, 100'000'000, 2, 0, 11},
                    {1500, 0x2000, 40'000'000, 2, 0, 12},
                    {1800, 0x3000, 1'000'000'000, 1, 0, 13},
                    {2000, 0x4000, 10'000'000, 2, 0, 14},
                    {2500, 0x4000, 10'000'000, 2, 1, 15},
                    {3000, 0x1000, 100'000'000, 2, 1, 16},
                    {6000, 0x2000, 0, 2, 1, 17},
                    {7000, 0x9999, 5, 2, 1, 18},
                    {7100, 0x5000, -3, 2, 0, 19},
                    {7200, 0x6000, 8, 2, 7, 20}};
  for (const M& m : rows) {
    db.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 0, {}, {}, {}, 0);", m.ts - 5,
                        m.ts + 5, t0, m.corr, m.op == 1 ? 2 : 1));
    db.exec(
        fmt::format("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES ({}, {}, 0, 1, {}, 0, {}, {}, {}, NULL, {}, 7);",
                    m.ts, p0, m.addr, m.bytes, m.kind, m.op, m.corr));
  }
  db.exec(
      fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1195, 1205, 0, {}, 31, 1, 0);"
                  "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (1200, {}, 1, 1, 4096, 0, 7000000, 2, 0, NULL, "
                  "31, 7);",
                  gtid(200, 1), gpid(200)));
  db.exec("COMMIT");
}

const model::Rank& rank_of(const model::Trace& t, int rank) {
  for (const model::Rank& r : t.ranks)
    if (r.rank == rank) return r;
  throw std::runtime_error("no rank");
}

TEST(NsysMemory, CudaMemoryRecordsAreTheAllocatorEventsWithTheirPeakAndGroups) {
  test::TempDir d;
  write_memory_export(d.path() / "run.sqlite");
  plugins::LoadResult r = plugins::load({d.path() / "run.sqlite"});
  ASSERT_EQ(r.trace.ranks.size(), 2u);
  const model::Rank& r0 = rank_of(r.trace, 0);
  // Six of the ten rows: the host buffer and the three odd ones left out.
  ASSERT_EQ(r0.allocator.size(), 6u);
  const metrics::MeasuredMemory m = metrics::measure_memory(r0);
  EXPECT_EQ(m.device, 0);
  EXPECT_EQ(m.peak_allocated, 150'000'000);
  EXPECT_EQ(m.peak_ts_ns, kSessionUtc + 2000);
  EXPECT_EQ(m.chain_breaks, 0);
  EXPECT_EQ(m.before_trace, 0);
  EXPECT_EQ(m.alive[size_t(metrics::Made::AllGather)].bytes, 100'000'000);
  EXPECT_EQ(m.alive[size_t(metrics::Made::Activations)].bytes, 40'000'000);
  EXPECT_EQ(m.alive[size_t(metrics::Made::Other)].bytes, 10'000'000);
  EXPECT_EQ(m.alive[size_t(metrics::Made::Other)].allocations, 1);
  EXPECT_EQ(r0.allocator.back().total_allocated, 0);  // B's free took its allocation's 40 MB, not its 0
  EXPECT_EQ(r0.allocator.back().total_reserved, -1);
  // One line for the three rows left out, naming each reason.
  const auto w = std::count_if(r0.warnings.begin(), r0.warnings.end(), [](const std::string& s) {
    return s.find("3 of CUDA_GPU_MEMORY_USAGE_EVENTS's 9 record(s) left out") != std::string::npos &&
           s.find("1 with negative or no bytes") != std::string::npos &&
           s.find("1 freeing an address with no allocation seen") != std::string::npos &&
           s.find("1 of an operation type other than") != std::string::npos;
  });
  EXPECT_EQ(w, 1) << ::testing::PrintToString(r0.warnings);

  const metrics::MeasuredMemory m1 = metrics::measure_memory(rank_of(r.trace, 1));
  EXPECT_EQ(m1.device, 1);
  EXPECT_EQ(m1.events, 1);
  EXPECT_EQ(m1.peak_allocated, 7'000'000);
}

TEST(NsysMemory, ReportShowsTheMeasuredPeakOfAnExport) {
  test::TempDir d;
  write_memory_export(d.path() / "run.sqlite");
  const test::RunResult res = test::run({SHARDSCOPE_BIN, "report", (d.path() / "run.sqlite").string(), "--ranks", "0"});
  ASSERT_EQ(res.rc, 0) << res.err;
  EXPECT_NE(res.out.find("memory measured (the GPU allocator's events, device 0): "), std::string::npos) << res.out;
  EXPECT_NE(res.out.find("peak 150.000 MB allocated in step 1"), std::string::npos) << res.out;
}

TEST(NsysMemory, AnExportWithoutTheRecordsSaysHowToCaptureThem) {
  test::TempDir d;
  write_memory_export(d.path() / "run.sqlite");
  test::Sql(d.path() / "run.sqlite", true).exec("DROP TABLE CUDA_GPU_MEMORY_USAGE_EVENTS");
  const test::RunResult res = test::run({SHARDSCOPE_BIN, "report", (d.path() / "run.sqlite").string(), "--ranks", "0"});
  ASSERT_EQ(res.rc, 0) << res.err;
  EXPECT_NE(res.out.find("memory: no GPU memory events in the trace; record them with nsys profile "
                         "--cuda-memory-usage=true"),
            std::string::npos)
      << res.out;
  EXPECT_EQ(res.out.find("memory measured"), std::string::npos);
}

}  // namespace
