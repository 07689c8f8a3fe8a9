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

trace::Event thread_name(int64_t tid, const std::string& name, int64_t os_tid) {
  trace::Event e;
  e.ph = 'M';
  e.name = k::kThreadName;
  e.tid = tid;
  e.args = {{k::kName, name}};
  if (os_tid >= 0) e.args[k::kOsTid] = os_tid;
  return e;
}

const model::Event* find(const model::Rank& r, std::string_view track, int64_t ts) {
  for (const auto& t : r.tracks)
    if (t.name == track)
      for (const auto& e : t.events)
        if (e.ts_ns == ts) return &e;
  return nullptr;
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

// The join of the trainer's host ranges to the device work they launched (plugins/common/gpu_join.h),
// on a trace written by hand: every kernel below is placed so that exactly one rule can claim it.
TEST(ShardscopeGpuTrace, HostRangesJoinTheKernelsTheyLaunchedByIdentity) {
  test::TempDir d;
  auto path = d.path() / "join.json";
  const char* ag = "ncclDevKernel_AllGather_RING_LL(x)";
  auto nccl = [](int64_t corr, const char* kind, int64_t message_bytes) {
    return json{{k::kArgStream, 13},
                {k::kArgCorrelation, corr},
                {k::kArgCollective, kind},
                {k::kArgNcclMessageBytes, message_bytes}};
  };
  {
    trace::Writer w(path, {{k::kSchemaVersion, k::kSchemaVersionValue}, {k::kRank, 0}, {k::kWorldSize, 2}});
    // The trainer's threads (os_tid in their names' metadata) and CUPTI's API tracks of the same threads.
    w.append(thread_name(1, "compute", 500));
    w.append(thread_name(4, "comm: all-gather", 600));
    w.append(thread_name(5, "comm: reduce-scatter", 601));
    w.append(thread_name(10, "CUDA API thread 500", -1));
    w.append(thread_name(11, "CUDA API thread 600", -1));
    w.append(thread_name(12, "CUDA API thread 601", -1));
    w.append(thread_name(13, "CUDA API thread 6000", -1));  // another thread: a tid prefix must not match
    w.append(thread_name(14, "CUDA API thread 700", -1));   // a thread the trainer does not trace (autograd's)
    w.append(ev(k::kStepRange, k::kCatStep, 1, 0, 3'000'000, {{k::kArgStep, 0}}));
    // 1. By thread: an all-gather range on the comm thread; the launch inside it on that thread's API
    //    track; its kernel by correlation. Bytes split over the two kernels NCCL ran it as, by message size.
    w.append(ev(k::kAllGather, k::kCatComm, 4, 400'000, 600'000,
                {{k::kArgUnit, 1}, {k::kArgBytes, 2000}, {k::kArgGroupSize, 2}, {k::kArgIssuedNs, 350'000}}));
    w.append(ev("cuLaunchKernelEx", k::kCatCudaDriver, 11, 450'000, 5'000, {{k::kArgCorrelation, 2}}));
    w.append(ev("cuLaunchKernelEx", k::kCatCudaDriver, 11, 460'000, 5'000, {{k::kArgCorrelation, 3}}));
    w.append(ev("cudaLaunchKernel", k::kCatCudaRuntime, 11, 470'000, 5'000, {{k::kArgCorrelation, 4}}));
    w.append(ev(ag, k::kCatComm, 20, 500'000, 100'000, nccl(2, "all_gather", 750)));
    w.append(ev(ag, k::kCatComm, 20, 600'000, 100'000, nccl(3, "all_gather", 250)));
    // Launched inside the all-gather but an all-reduce: not the same collective, left alone.
    w.append(
        ev("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", k::kCatComm, 21, 700'000, 10'000, nccl(4, "all_reduce", 4)));
    // Launched by the comm thread outside any host range: left alone.
    w.append(ev("cuLaunchKernelEx", k::kCatCudaDriver, 11, 1'100'000, 5'000, {{k::kArgCorrelation, 5}}));
    w.append(ev(ag, k::kCatComm, 20, 1'200'000, 100'000, nccl(5, "all_gather", 640)));
    // Launched inside the all-gather's time by another thread (6000, not 600): left alone.
    w.append(ev("cuLaunchKernelEx", k::kCatCudaDriver, 13, 480'000, 5'000, {{k::kArgCorrelation, 6}}));
    w.append(ev(ag, k::kCatComm, 22, 800'000, 50'000, nccl(6, "all_gather", 640)));
    // 2. By external id: the kernel names its host collective's issued_ns; its launch is on no comm thread
    //    and outside the range, so only the id can join it. One tagged with another kind is not ours.
    w.append(ev(k::kReduceScatter, k::kCatComm, 5, 1'400'000, 300'000,
                {{k::kArgUnit, 2}, {k::kArgBytes, 4000}, {k::kArgGroupSize, 2}, {k::kArgIssuedNs, 1'350'000}}));
    w.append(ev("cuLaunchKernelEx", k::kCatCudaDriver, 13, 1'300'000, 5'000, {{k::kArgCorrelation, 7}}));
    json tagged = nccl(7, "reduce_scatter", 2000);
    tagged[k::kArgExternalKind] = k::kExternalKindTrainerCollective;
    tagged[k::kArgExternalId] = 1'350'000;
    w.append(ev("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(x)", k::kCatComm, 23, 1'500'000, 100'000, tagged));
    json other = nccl(8, "reduce_scatter", 2000);
    other[k::kArgExternalKind] = k::kExternalKindTrainerCollective + 1;
    other[k::kArgExternalId] = 1'350'000;
    w.append(ev("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(x)", k::kCatComm, 23, 1'650'000, 10'000, other));
    // 3. A unit's backward compute on the compute thread: two kernels launched inside it, and one that an
    //    untraced thread (libtorch's autograd device thread) launched inside it onto the compute stream,
    //    span its device time; one launched after it, a copy and a stream wait launched inside it, one the
    //    untraced thread launched onto another stream and one a traced comm thread launched do not count.
    w.append(ev("cudaLaunchKernel", k::kCatCudaRuntime, 14, 2'120'000, 5'000, {{k::kArgCorrelation, 25}}));
    w.append(ev("cudaLaunchKernel", k::kCatCudaRuntime, 14, 2'130'000, 5'000, {{k::kArgCorrelation, 26}}));
    w.append(ev("cudaLaunchKernel", k::kCatCudaRuntime, 11, 2'140'000, 5'000, {{k::kArgCorrelation, 27}}));
    w.append(ev("cudaLaunchKernel", k::kCatCudaRuntime, 14, 2'250'000, 5'000, {{k::kArgCorrelation, 28}}));
    w.append(ev("bwd", k::kCatKernel, 30, 2'550'000, 50'000, {{k::kArgStream, 7}, {k::kArgCorrelation, 25}}));
    w.append(ev("bwd", k::kCatKernel, 31, 2'700'000, 50'000, {{k::kArgStream, 8}, {k::kArgCorrelation, 26}}));
    w.append(ev("bwd", k::kCatKernel, 30, 2'950'000, 10'000, {{k::kArgStream, 7}, {k::kArgCorrelation, 27}}));
    w.append(ev("bwd", k::kCatKernel, 30, 2'970'000, 10'000, {{k::kArgStream, 7}, {k::kArgCorrelation, 28}}));
    w.append(ev(k::kUnitBackward, k::kCatCompute, 1, 2'000'000, 200'000, {{k::kArgUnit, 3}}));
    w.append(ev("cudaLaunchKernel", k::kCatCudaRuntime, 10, 2'050'000, 5'000, {{k::kArgCorrelation, 20}}));
    w.append(ev("cudaLaunchKernel", k::kCatCudaRuntime, 10, 2'100'000, 5'000, {{k::kArgCorrelation, 21}}));
    w.append(ev("cudaMemcpyAsync", k::kCatCudaRuntime, 10, 2'150'000, 5'000, {{k::kArgCorrelation, 22}}));
    w.append(ev("cudaStreamWaitEvent", k::kCatCudaRuntime, 10, 2'160'000, 5'000, {{k::kArgCorrelation, 23}}));
    w.append(ev("cudaLaunchKernel", k::kCatCudaRuntime, 10, 2'250'000, 5'000, {{k::kArgCorrelation, 24}}));
    w.append(ev("gemm", k::kCatKernel, 30, 2'300'000, 100'000, {{k::kArgStream, 7}, {k::kArgCorrelation, 20}}));
    w.append(ev("gemm", k::kCatKernel, 30, 2'400'000, 150'000, {{k::kArgStream, 7}, {k::kArgCorrelation, 21}}));
    w.append(ev("Memcpy DtoH", k::kCatMemcpy, 30, 2'600'000, 100'000,
                {{k::kArgStream, 7}, {k::kArgCorrelation, 22}, {k::kArgBytes, 64}}));
    w.append(
        ev("Stream Wait Event", k::kCatSync, 30, 2'100'000, 900'000, {{k::kArgStream, 7}, {k::kArgCorrelation, 23}}));
    w.append(ev("gemm", k::kCatKernel, 30, 2'800'000, 100'000, {{k::kArgStream, 7}, {k::kArgCorrelation, 24}}));
    for (int64_t tid : {20, 21, 22, 23, 30, 31}) w.append(thread_name(tid, "GPU 0 stream " + std::to_string(tid), -1));
    w.close();
  }
  plugins::LoadResult loaded = plugins::load({path});
  const model::Rank& r = loaded.trace.ranks.at(0);

  const model::Event* first = find(r, "GPU 0 stream 20", 500'000);
  const model::Event* second = find(r, "GPU 0 stream 20", 600'000);
  ASSERT_TRUE(first && second);
  for (const model::Event* e : {first, second}) {
    EXPECT_EQ(e->unit, 1);
    EXPECT_EQ(e->group_size, 2);
    EXPECT_EQ(e->issued_ns, 350'000);  // the compute thread's issue, not the comm thread's launch
    EXPECT_EQ(e->coll, model::CollectiveKind::AllGather);
  }
  EXPECT_EQ(first->bytes, 1500);  // 2000 split 750 : 250
  EXPECT_EQ(second->bytes, 500);

  const model::Event* all_reduce = find(r, "GPU 0 stream 21", 700'000);
  ASSERT_TRUE(all_reduce);
  EXPECT_EQ(all_reduce->unit, -1);
  EXPECT_EQ(all_reduce->group_size, 0);
  EXPECT_EQ(all_reduce->issued_ns, 470'000);  // its own launch

  for (auto [track, ts, launch] :
       {std::tuple{"GPU 0 stream 20", 1'200'000, 1'100'000}, std::tuple{"GPU 0 stream 22", 800'000, 480'000}}) {
    const model::Event* e = find(r, track, ts);
    ASSERT_TRUE(e) << track << " " << ts;
    EXPECT_EQ(e->unit, -1) << track << " " << ts;
    EXPECT_EQ(e->bytes, model::kUnknown) << track << " " << ts;
    EXPECT_EQ(e->issued_ns, launch) << track << " " << ts;
  }

  const model::Event* by_id = find(r, "GPU 0 stream 23", 1'500'000);
  ASSERT_TRUE(by_id);
  EXPECT_EQ(by_id->unit, 2);
  EXPECT_EQ(by_id->bytes, 4000);
  EXPECT_EQ(by_id->group_size, 2);
  EXPECT_EQ(by_id->issued_ns, 1'350'000);
  const model::Event* other_kind = find(r, "GPU 0 stream 23", 1'650'000);
  ASSERT_TRUE(other_kind);
  EXPECT_EQ(other_kind->unit, -1);

  // The derived device-time unit range: [first kernel start, last kernel end) of the three kernels.
  std::vector<const model::Event*> derived;
  for (const auto& t : r.tracks)
    for (const auto& e : t.events)
      if (r.str(e.cat) == k::kCatFsdp) {
        EXPECT_EQ(t.name, "FSDP units (device time)");
        derived.push_back(&e);
      }
  ASSERT_EQ(derived.size(), 1u);
  EXPECT_EQ(r.str(derived[0]->name), k::kUnitBackward);
  EXPECT_EQ(derived[0]->unit, 3);
  EXPECT_EQ(derived[0]->ts_ns, 2'300'000);
  EXPECT_EQ(derived[0]->end_ns(), 2'600'000);
  EXPECT_FALSE(derived[0]->is_device());  // a label over device time, not more device activity
}

}  // namespace
