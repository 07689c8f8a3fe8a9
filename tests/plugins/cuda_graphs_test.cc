// CUDA graphs: an Nsight Systems export in graph-trace mode (one CUPTI_ACTIVITY_KIND_GRAPH_TRACE row a
// graph launch) reads each launch as GPU work on its stream, counted as busy and as compute; node-trace
// kernels (graphNodeId set) stay kernels; a table of GPU work the importer does not read is named in a
// warning. On Kineto, a cudaGraphLaunch keeps every kernel it launched.
#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>

#include "analyzer/metrics/breakdown.h"
#include "plugins/load/load.h"
#include "tests/plugins/nsys_support.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

constexpr int64_t kUtc = 1'700'000'000'000'000'000;
constexpr int64_t kPid = int64_t(100) << 24;  // globalPid of pid 100
constexpr int64_t kTid = kPid | 101;

// An export of one process: a kernel launched by cudaLaunchKernel, then two launches of graph 7 (exec 3) by
// cudaGraphLaunch on stream 13; `node_trace` writes the graph's kernels (graphNodeId set) instead.
void write_export(const fs::path& file, bool node_trace, const std::string& extra_sql = "") {
  test::Sql db(file, true);
  db.exec(test::export_tables_sql());
  db.exec("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN graphNodeId INTEGER;");
  // The columns of a real nsys 2024.3 capture's table.
  db.exec(
      "CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER, "
      "contextId INTEGER, greenContextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, "
      "graphId INTEGER, graphExecId INTEGER);");
  db.exec(fmt::format(
      "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES ({0}, '', '', 0);"
      "INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'cudaLaunchKernel_v7000'), (3, 'cudaGraphLaunch_v10000'),"
      " (4, 'graph_node_kernel');"
      "INSERT INTO PROCESSES VALUES ({1}, 100, 'python3');"
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1000, 1100, 0, {2}, 1, 2, 0), (2000, 2100, 0, {2}, 2, 3, 0),"
      " (5000, 5100, 0, {2}, 3, 3, 0);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1200, 1900, 0, 7, 1, {1}, 1, 1, NULL);",
      kUtc, kPid, kTid));
  if (node_trace)
    db.exec(fmt::format(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2200, 2600, 0, 13, 2, {0}, 4, 4, 55), (2600, 3200, 0, 13, 2, "
        "{0}, 4, 4, 56);",
        kPid));
  else
    db.exec(fmt::format(
        "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (2200, 3200, 0, 1, 0, 13, 2, {0}, 7, 3), (5200, 6200, 0, "
        "1, 0, 13, 3, {0}, 7, 3);",
        kPid));
  if (!extra_sql.empty()) db.exec(extra_sql);
}

std::vector<const model::Event*> named(const model::Rank& r, std::string_view name) {
  std::vector<const model::Event*> out;
  for (const model::Track& t : r.tracks)
    for (const model::Event& e : t.events)
      if (r.str(e.name) == name) out.push_back(&e);
  return out;
}

TEST(CudaGraphs, GraphTraceRowsAreGpuWorkOnTheirStream) {
  test::TempDir d;
  write_export(d.path() / "graphs.sqlite", false);
  plugins::LoadResult r = plugins::load({d.path() / "graphs.sqlite"});
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  const model::Rank& rank = r.trace.ranks[0];
  std::vector<const model::Event*> g = named(rank, "CUDA graph 7");
  ASSERT_EQ(g.size(), 2u);
  for (const model::Event* e : g) {
    EXPECT_EQ(rank.str(e->cat), "cuda_graph");
    EXPECT_EQ(e->cls, model::IntervalClass::Compute);
    EXPECT_EQ(e->dur_ns, 1000);
  }
  EXPECT_EQ(g[0]->ts_ns, kUtc + 2200);
  EXPECT_EQ(g[0]->issued_ns, kUtc + 2000);  // its cudaGraphLaunch, by correlationId
  EXPECT_EQ(g[1]->issued_ns, kUtc + 5000);
  EXPECT_EQ(rank.metadata["nsys"]["cuda_graph_launches"], 2);
  bool on_stream = false;
  for (const model::Track& t : rank.tracks)
    on_stream |= t.kind == model::TrackKind::DeviceStream && t.tid == 13 && t.events.size() == 2;
  EXPECT_TRUE(on_stream);
  // Busy and compute: the kernel's 700 ns and the graphs' 2 x 1000 ns in a window [1200, 6200).
  auto b = metrics::hta_breakdown(rank);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->window_ns, 5000);
  EXPECT_EQ(b->busy_ns, 2700);
  EXPECT_EQ(b->compute_ns, 2700);
  for (const std::string& w : r.warnings) EXPECT_EQ(w.find("not read"), std::string::npos) << w;
}

TEST(CudaGraphs, NodeTraceKernelsStayKernels) {
  test::TempDir d;
  write_export(d.path() / "nodes.sqlite", true);
  plugins::LoadResult r = plugins::load({d.path() / "nodes.sqlite"});
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  const model::Rank& rank = r.trace.ranks[0];
  std::vector<const model::Event*> k = named(rank, "graph_node_kernel");
  ASSERT_EQ(k.size(), 2u);
  for (const model::Event* e : k) {
    EXPECT_EQ(rank.str(e->cat), "kernel");
    EXPECT_EQ(e->cls, model::IntervalClass::Compute);
    EXPECT_EQ(e->issued_ns, kUtc + 2000);
  }
  EXPECT_TRUE(named(rank, "CUDA graph 7").empty());
  EXPECT_FALSE(rank.metadata["nsys"].contains("cuda_graph_launches"));
}

TEST(CudaGraphs, UnreadTablesOfGpuWorkAreNamed) {
  test::TempDir d;
  write_export(d.path() / "vk.sqlite", false,
               "CREATE TABLE VULKAN_WORKLOAD (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER);"
               "INSERT INTO VULKAN_WORKLOAD VALUES (10, 20, 1), (30, 40, 1);"
               "CREATE TABLE OPENGL_WORKLOAD (start INTEGER NOT NULL, end INTEGER NOT NULL);");  // empty: not named
  plugins::LoadResult r = plugins::load({d.path() / "vk.sqlite"});
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  size_t said = 0;
  for (const std::string& w : r.warnings)
    if (w.find("not read") != std::string::npos) {
      ++said;
      EXPECT_NE(w.find("VULKAN_WORKLOAD (2 rows)"), std::string::npos) << w;
      EXPECT_EQ(w.find("OPENGL_WORKLOAD"), std::string::npos) << w;
    }
  EXPECT_EQ(said, 1u);
}

// Kineto: a graph launch's kernels share its correlation id; each is read, launched by it, and kept inside
// HTA's window (two steps, so HTA's step filter applies).
TEST(CudaGraphs, KinetoGraphLaunchKeepsItsKernels) {
  std::string events;
  auto x = [&](const std::string& cat, const std::string& name, int tid, int64_t ts, int64_t dur,
               const std::string& args) {
    events += fmt::format(R"({{"ph": "X", "cat": "{}", "name": "{}", "pid": {}, "tid": {}, "ts": {}, "dur": {})", cat,
                          name, tid == 0 ? 0 : 100, tid, ts, dur) +
              (args.empty() ? "" : ", \"args\": {" + args + "}") + "},\n";
  };
  x("user_annotation", "ProfilerStep#1", 100, 1000, 100, "");
  x("user_annotation", "ProfilerStep#2", 100, 1100, 100, "");
  x("cuda_runtime", "cudaGraphLaunch", 100, 1010, 5, R"("correlation": 9)");
  for (int i = 0; i < 3; ++i)
    x("kernel", fmt::format("graph_kernel_{}", i), 7, 1020 + 10 * i, 8, R"("stream": 7, "correlation": 9)");
  x("cuda_runtime", "cudaLaunchKernel", 100, 1110, 5, R"("correlation": 10)");
  x("kernel", "after", 7, 1120, 8, R"("stream": 7, "correlation": 10)");
  test::TempDir d;
  {
    std::ofstream(d.path() / "graph.json")
        << "{\"traceEvents\": [\n"
        << events << "{\"ph\": \"i\", \"name\": \"end\", \"pid\": 0, \"tid\": 0, \"ts\": 0}]}";
  }
  plugins::LoadResult r = plugins::load({d.path() / "graph.json"});
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  const model::Rank& rank = r.trace.ranks[0];
  for (int i = 0; i < 3; ++i) {
    std::vector<const model::Event*> k = named(rank, fmt::format("graph_kernel_{}", i));
    ASSERT_EQ(k.size(), 1u) << i;
    EXPECT_EQ(k[0]->cls, model::IntervalClass::Compute);
    EXPECT_EQ(k[0]->issued_ns, 1010'000);
    EXPECT_EQ(k[0]->flags & model::kOutsideHtaWindow, 0) << i;
    EXPECT_EQ(k[0]->step, 0) << i;
  }
  auto b = metrics::hta_breakdown(rank);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->device_events, 4u);
  EXPECT_EQ(b->left_out, 0u);
  EXPECT_EQ(b->compute_us, 32);
}

}  // namespace
