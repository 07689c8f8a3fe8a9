// shardscope's own files from a GPU run, in the shape tracer/cupti writes them (keys.h): kernels, NCCL kernels
// (cat "comm" with a stream), synchronization with and without a stream, CUDA API launches linked by
// correlation, and the trainer's host collective ranges, which on a GPU are only the host's view.
#include <gtest/gtest.h>

#include "analyzer/metrics/breakdown.h"
#include "plugins/load/load.h"
#include "tests/support/temp_dir.h"
#include "tracer/format/keys.h"
#include "tracer/format/writer.h"

using namespace shardscope;
namespace k = shardscope::keys;
using nlohmann::json;

namespace {

trace::Event ev(const std::string& name, const char* cat, int64_t tid, int64_t ts, int64_t dur, json args) {
  trace::Event e;
  e.name = name;
  e.cat = cat;
  e.tid = tid;
  e.ts_ns = ts;
  e.dur_ns = dur;
  e.args = std::move(args);
  return e;
}

TEST(ShardscopeGpuTrace, ClassesLaunchesStepsAndBreakdown) {
  test::TempDir d;
  auto path = d.path() / "gpu.json";
  {
    trace::Writer w(path, {{k::kSchemaVersion, k::kSchemaVersionValue}, {k::kRank, 0}, {k::kWorldSize, 1}});
    w.append(ev(k::kStepRange, k::kCatStep, 1, 0, 1'000'000, {{k::kArgStep, 0}}));
    w.append(ev(k::kStepRange, k::kCatStep, 1, 1'000'000, 1'000'000, {{k::kArgStep, 1}}));
    w.append(ev("cudaLaunchKernel", k::kCatCudaRuntime, 10, 100'000, 5'000, {{k::kArgCorrelation, 1}}));
    w.append(ev("cudaLaunchKernel", k::kCatCudaRuntime, 10, 200'000, 5'000, {{k::kArgCorrelation, 2}}));
    w.append(ev("cudaLaunchKernel", k::kCatCudaRuntime, 10, 1'100'000, 5'000, {{k::kArgCorrelation, 3}}));
    w.append(ev("all_gather", k::kCatComm, 2, 400'000, 600'000, {{k::kArgUnit, 1}}));  // the trainer's host range
    w.append(ev("gemm", k::kCatKernel, 20, 300'000, 400'000, {{k::kArgStream, 7}, {k::kArgCorrelation, 1}}));
    w.append(ev("ncclDevKernel_AllGather_RING_LL(x)", k::kCatComm, 21, 500'000, 400'000,
                {{k::kArgStream, 13}, {k::kArgCorrelation, 2}, {k::kArgCollective, "all_gather"}}));
    w.append(ev("Stream Wait Event", k::kCatSync, 20, 900'000, 50'000, {{k::kArgStream, 7}, {k::kArgCorrelation, 9}}));
    w.append(ev("Event Synchronize", k::kCatSync, 22, 950'000, 500'000, {{k::kArgCorrelation, 10}}));
    w.append(ev("gemm", k::kCatKernel, 20, 1'200'000, 100'000, {{k::kArgStream, 7}, {k::kArgCorrelation, 3}}));
    w.close();
  }
  plugins::LoadResult loaded = plugins::load({path});
  const model::Rank& r = loaded.trace.ranks.at(0);
  std::map<std::string, std::vector<const model::Event*>> by;
  for (const auto& t : r.tracks)
    for (const auto& e : t.events) by[std::string(r.str(e.name))].push_back(&e);
  EXPECT_EQ(by["gemm"][0]->cls, model::IntervalClass::Compute);
  EXPECT_EQ(by["gemm"][0]->issued_ns, 100'000);
  EXPECT_EQ(by["gemm"][0]->step, 0);
  EXPECT_EQ(by["gemm"][1]->step, 1);
  const model::Event* nccl = by["ncclDevKernel_AllGather_RING_LL(x)"][0];
  EXPECT_EQ(nccl->cls, model::IntervalClass::Communication);
  EXPECT_EQ(nccl->coll, model::CollectiveKind::AllGather);
  EXPECT_EQ(nccl->issued_ns, 200'000);
  EXPECT_EQ(by["Stream Wait Event"][0]->cls, model::IntervalClass::Sync);
  EXPECT_EQ(by["Event Synchronize"][0]->cls, model::IntervalClass::Host);  // a host thread waiting, not the device
  EXPECT_EQ(by["all_gather"][0]->cls, model::IntervalClass::Host);         // the host's view of the NCCL kernel
  ASSERT_EQ(r.steps.size(), 2u);
  // Device windows: step 0 from its first kernel to step 1's first kernel; step 1 to its last kernel's end.
  EXPECT_EQ(r.steps[0].start_ns, 300'000);
  EXPECT_EQ(r.steps[0].end_ns, 1'200'000);
  EXPECT_EQ(r.steps[1].end_ns, 1'300'000);
  // Device intervals (µs): compute [300,700) and [1200,1300); comm [500,900); sync [900,950).
  // Window 1000; busy 650 + 100 = 750 (idle 25 %); compute 500 (50 %); overlap [500,700) = 200 of 400 (50 %).
  auto b = metrics::hta_breakdown(r);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->window_us, 1000);
  EXPECT_DOUBLE_EQ(b->idle_pct(), 25.0);
  EXPECT_DOUBLE_EQ(b->compute_pct(), 50.0);
  EXPECT_DOUBLE_EQ(b->non_compute_pct(), 25.0);
  EXPECT_DOUBLE_EQ(*b->overlap_pct(), 50.0);
}

}  // namespace
