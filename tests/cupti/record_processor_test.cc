// CUPTI records -> trace events: synthetic CUPTI 13.0 records in, exactly the expected events, flows and
// counters out. Each expected event is written out by hand from the record it comes from.
#include "tracer/cupti/record_processor.h"

#include <gtest/gtest.h>

#include "tests/cupti/records.h"
#include "tracer/format/keys.h"
#include "tracer/format/serialize.h"

namespace shardscope::tracer::cupti {
namespace {

using json = nlohmann::json;
using test::Records;
using trace::Event;

constexpr int64_t kPid = 3;

using test::dump;

class RecordProcessorTest : public ::testing::Test {
 protected:
  RecordProcessor make(bool default_domain_markers = true) {
    return RecordProcessor({.pid = kPid, .default_domain_markers = default_domain_markers},
                           [this](const std::string& name) {
                             tracks.push_back(name);
                             return uint32_t(100 + tracks.size() - 1);
                           });
  }
  Event X(std::string name, std::string cat, int64_t tid, int64_t ts, int64_t dur, json args) {
    return {'X', std::move(name), std::move(cat), kPid, tid, ts, dur, "", std::move(args)};
  }
  Event flow(char ph, int64_t tid, int64_t ts, std::string id) {
    return {ph, keys::kFlowLaunch, keys::kCatFlow, kPid, tid, ts, 0, std::move(id), nullptr};
  }
  std::vector<std::string> tracks;  // names in the order the processor asked for them: tid 100, 101, ...
};

TEST_F(RecordProcessorTest, KernelLinkedToItsLaunchByAFlowOnTheTraceClock) {
  Records r;
  auto& k = r.kernel("_Z9vectorAddPfS_i", 7, 0, 1, 13, 2000, 5000);
  k.gridX = 4, k.gridY = 1, k.gridZ = 1, k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 32, k.staticSharedMemory = 48, k.dynamicSharedMemory = 16;
  r.api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 7, 4242, 1000, 1500);
  RecordProcessor p = make();
  p.set_clock_offset(1'000'000);
  p.process(r.batch());  // the kernel comes first in the buffer, as CUPTI allows
  std::vector<Event> expected = {
      X("cudaLaunchKernel", keys::kCatCudaRuntime, 100, 1'001'000, 500, {{"correlation", 7}}),
      X("vectorAdd(float*, float*, int)", keys::kCatKernel, 101, 1'002'000, 3000,
        {{"device", 0},
         {"stream", 13},
         {"correlation", 7},
         {"grid", {4, 1, 1}},
         {"block", {256, 1, 1}},
         {"registers_per_thread", 32},
         {"shared_memory", 64}}),
      flow('s', 100, 1'001'000, "1"),
      flow('f', 101, 1'002'000, "1"),
  };
  EXPECT_EQ(dump(p.take()), dump(expected));
  EXPECT_EQ(tracks, (std::vector<std::string>{"CUDA API thread 4242", "GPU 0 stream 13"}));
  EXPECT_TRUE(p.take().empty());
  EXPECT_EQ(p.stats().flows, 1u);
}

TEST_F(RecordProcessorTest, MemcpyAndMemsetLinkToLaunchesThatComeInALaterBatch) {
  Records gpu, host;
  gpu.memcpy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096, 8, 0, 7, 3000, 4000);
  gpu.memset(255, 1024, 9, 0, 7, 4100, 4200);
  host.api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 8, 77, 2000, 2100);
  host.api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 9, 77, 2200, 2300);
  RecordProcessor p = make();
  p.process(gpu.batch());
  std::vector<Event> first = {
      X("Memcpy HtoD", keys::kCatMemcpy, 100, 3000, 1000,
        {{"bytes", 4096}, {"copy_kind", "HtoD"}, {"device", 0}, {"stream", 7}, {"correlation", 8}}),
      X("Memset", keys::kCatMemset, 100, 4100, 100,
        {{"bytes", 1024}, {"memset_value", 255}, {"device", 0}, {"stream", 7}, {"correlation", 9}}),
  };
  EXPECT_EQ(dump(p.take()), dump(first));
  p.process(host.batch());
  std::vector<Event> second = {
      X("cudaMemcpyAsync", keys::kCatCudaRuntime, 101, 2000, 100, {{"correlation", 8}}),
      flow('s', 101, 2000, "1"),
      flow('f', 100, 3000, "1"),
      X("cudaMemsetAsync", keys::kCatCudaRuntime, 101, 2200, 100, {{"correlation", 9}}),
      flow('s', 101, 2200, "2"),
      flow('f', 100, 4100, "2"),
  };
  EXPECT_EQ(dump(p.take()), dump(second));
}

TEST_F(RecordProcessorTest, NcclKernelsOfBothNameFamiliesJoinedWithNcclNvtxRanges) {
  Records r;
  const uint32_t t = 500;  // the thread that calls NCCL
  // An ungrouped all-gather: NCCL launches with cuLaunchKernelEx inside its ncclAllGather range.
  r.range(1, 100, 300, t, "ncclAllGather", "NCCL");
  r.api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 31, t, 150, 200);
  r.kernel("_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE", 31, 0, 1, 20, 1000, 5000);
  // A group of two reduce-scatters: one Generic kernel, launched inside ncclGroupEnd.
  r.range(5, 460, 600, t, "ncclGroupEnd", "NCCL");  // added out of time order on purpose
  r.range(2, 400, 410, t, "ncclGroupStart", "NCCL");
  r.range(3, 420, 430, t, "ncclReduceScatter", "NCCL");
  r.range(4, 440, 450, t, "ncclReduceScatter", "NCCL");
  r.api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 32, t, 500, 550);
  r.kernel("_Z21ncclDevKernel_Generic24ncclDevKernelArgsStorageILm4096EE", 32, 0, 1, 20, 6000, 9000);
  // The NCCL 2.8-2.18 family, with no launch record and no NVTX: the name alone says all_reduce.
  r.kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 33, 0, 1, 20, 10000, 12000);
  RecordProcessor p = make();
  p.process(r.batch());
  const json nccl = {{"domain", "NCCL"}};
  auto kargs = [](uint32_t corr, json extra) {
    json a = {{"device", 0},       {"stream", 20},       {"correlation", corr},
              {"grid", {0, 0, 0}}, {"block", {0, 0, 0}}, {"registers_per_thread", 0},
              {"shared_memory", 0}};
    a.update(extra);
    return a;
  };
  std::vector<Event> expected = {
      X("cuLaunchKernelEx", keys::kCatCudaDriver, 100, 150, 50, {{"correlation", 31}}),
      X("cuLaunchKernelEx", keys::kCatCudaDriver, 100, 500, 50, {{"correlation", 32}}),
      X("ncclAllGather", keys::kCatNvtx, 101, 100, 200, nccl),
      X("ncclGroupStart", keys::kCatNvtx, 101, 400, 10, nccl),
      X("ncclReduceScatter", keys::kCatNvtx, 101, 420, 10, nccl),
      X("ncclReduceScatter", keys::kCatNvtx, 101, 440, 10, nccl),
      X("ncclGroupEnd", keys::kCatNvtx, 101, 460, 140, nccl),
      X("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", keys::kCatComm, 102, 1000, 4000,
        kargs(31, {{"collective", "all_gather"}, {"nccl_op", "ncclAllGather"}})),
      flow('s', 100, 150, "1"),
      flow('f', 102, 1000, "1"),
      X("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", keys::kCatComm, 102, 6000, 3000,
        kargs(32, {{"collective", "reduce_scatter"}, {"nccl_op", "ncclReduceScatter"}, {"nccl_group_ops", 2}})),
      flow('s', 100, 500, "2"),
      flow('f', 102, 6000, "2"),
      X("ncclKernel_AllReduce_RING_LL_Sum_float", keys::kCatComm, 102, 10000, 2000,
        kargs(33, {{"collective", "all_reduce"}})),
  };
  EXPECT_EQ(dump(p.take()), dump(expected));
  EXPECT_EQ(tracks, (std::vector<std::string>{"CUDA API thread 500", "NVTX thread 500", "GPU 0 stream 20"}));
}

TEST_F(RecordProcessorTest, NvtxMarkersPairedWithTheirPayloads) {
  for (bool default_domain : {true, false}) {
    SCOPED_TRACE(default_domain);
    tracks.clear();
    Records r;
    r.range(10, 1000, 4000, 9, "forward", "trainer");
    auto& d = r.marker_data(10);
    d.payloadKind = CUPTI_METRIC_VALUE_KIND_UINT64;
    d.payload.metricValueUint64 = 42;
    d.flags = CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB;
    d.color = 0xff00ff00;
    d.category = 3;
    r.marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 11, 2000, 9, "checkpoint", nullptr);
    auto& d2 = r.marker_data(11);
    d2.payloadKind = CUPTI_METRIC_VALUE_KIND_DOUBLE;
    d2.payload.metricValueDouble = 0.5;
    r.range(12, 500, 5000, 9, "step", nullptr);  // the default domain
    RecordProcessor p = make(default_domain);
    p.process(r.batch(/*reversed=*/true));
    Event forward = X("forward", keys::kCatNvtx, 100, 1000, 3000,
                      {{"domain", "trainer"}, {"payload", 42}, {"color", 0xff00ff00u}, {"category", 3}});
    std::vector<Event> expected;
    if (default_domain) {
      expected = {{'i', "checkpoint", keys::kCatNvtx, kPid, 100, 2000, 0, "", {{"payload", 0.5}}},
                  forward,
                  X("step", keys::kCatNvtx, 100, 500, 4500, json::object())};
    } else {
      expected = {forward};
    }
    EXPECT_EQ(dump(p.take()), dump(expected));
    EXPECT_EQ(tracks, std::vector<std::string>{"NVTX thread 9"});
  }
}

TEST_F(RecordProcessorTest, WhatIsKeptForLaterRecordsStaysBounded) {
  // A long run: launches whose GPU work never comes, GPU work whose launch never comes, default-domain
  // markers (a linked program's own Ranges) with payloads, ranges that never end.
  RecordProcessor p = RecordProcessor({.pid = kPid, .default_domain_markers = false, .memory = 100},
                                      [](const std::string&) { return 1u; });
  for (uint32_t i = 1; i <= 5000; ++i) {
    Records r;
    r.api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 2 * i, 1, 10, 20);
    r.kernel("k", 2 * i + 1, 0, 1, 1, 30, 40);
    r.external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, i, 2 * i);
    r.range(3 * i, 50, 60, 1, "range", nullptr);
    r.marker_data(3 * i).category = 1;
    r.marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 3 * i + 1, 70, 1, "never ends", "d");
    p.process(r.batch());
    p.take();
  }
  EXPECT_LE(p.held(), 5u * 100u);
  EXPECT_GE(p.held(), 100u);  // it does remember, up to the bound
}

TEST_F(RecordProcessorTest, AllocationsAndFreesBecomeAPerDeviceCounter) {
  Records r;
  r.memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 1, 0x1000, 1 << 20, 500);
  r.memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 1, 0x1000, 1 << 20, 300);
  r.memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 1, 0x9000, 1 << 30, 400);  // allocated before tracing
  r.memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 1, 0x2000, 2 << 20, 100);
  r.memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0, 0x2000, 7, 200);  // another device
  RecordProcessor p = make();
  p.process(r.batch());
  auto c = [](const char* name, int64_t ts, int64_t value) {
    return Event{'C', name, keys::kCatCounter, kPid, 0, ts, 0, "", {{"value", value}}};
  };
  std::vector<Event> expected = {
      c("gpu1.memory_allocated", 100, 2 << 20),
      c("gpu0.memory_allocated", 200, 7),
      c("gpu1.memory_allocated", 300, 3 << 20),
      c("gpu1.memory_allocated", 500, 2 << 20),
  };
  EXPECT_EQ(dump(p.take()), dump(expected));
  EXPECT_EQ(p.stats().ignored, 1u);
}

TEST_F(RecordProcessorTest, TheCachingAllocatorsAllocationsAreItsReserveApart) {
  // With the allocation source on (the injection library), PyTorch's caching allocator's cudaMallocs are its
  // reserve; cuBLAS's own workspace, and a record naming no library, are the device's but not the reserve.
  Records r;
  const char* c10 = "/venv/lib/python3.11/site-packages/torch/lib/libc10_cuda.so";
  r.memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0, 0x1000, 20 << 20, 100).source = c10;
  r.memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0, 0x9000, 64 << 20, 200).source =
      "/venv/lib/python3.11/site-packages/nvidia/cu13/lib/libcublas.so.13";
  r.memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0, 0x5000, 2 << 20, 300).source = c10;
  r.memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0, 0x7000, 1024, 350);   // no source
  r.memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 0, 0x1000, 20 << 20, 400);  // empty_cache
  r.memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 0, 0x9000, 64 << 20, 500);
  // A c10 address reused without a free we saw, now by another library: the reserve gives it up.
  r.memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 0, 0x5000, 4 << 20, 600).source = "libnccl.so.2";
  RecordProcessor p = make();
  p.process(r.batch());
  std::vector<std::pair<int64_t, int64_t>> reserve;
  for (const Event& e : p.take())
    if (e.name == "memory.allocator_reserved") reserve.emplace_back(e.ts_ns, e.args.at("value").get<int64_t>());
  EXPECT_EQ(reserve,
            (std::vector<std::pair<int64_t, int64_t>>{{100, 20 << 20}, {300, 22 << 20}, {400, 2 << 20}, {600, 0}}));
}

TEST_F(RecordProcessorTest, ApiCallsSyncOverheadExternalIdsAndDroppedRecords) {
  Records r;
  r.external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 99, 41);
  r.api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 41, 5, 100, 900)
      .returnValue = 0;
  r.api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 42, 5, 950, 960).returnValue = 1;
  r.kernel("k", 40, 2, 7, 3, 50, 80);  // teaches that context 7 is device 2; its launch never comes
  r.sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 7, 3, 41, 110, 890);
  r.overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, 5, 1000, 1100);
  r.kernel("zero", 43, 2, 7, 3, 0, 0);  // CUDA 13.0's zero timestamps: no event at the clock's epoch
  RecordProcessor p = make();
  p.process(r.batch());
  p.add_dropped(5);
  p.add_dropped(0);
  p.add_dropped(3);
  auto meta = [](uint64_t n) {
    return Event{'M', keys::kMetadataPatch, "", kPid, 0, 0, 0, "", {{"dropped_gpu_records", n}}};
  };
  std::vector<Event> expected = {
      X("cudaStreamSynchronize", keys::kCatCudaRuntime, 100, 100, 800,
        {{"correlation", 41}, {"external_kind", 3}, {"external_id", 99}}),
      X("cuLaunchKernelEx", keys::kCatCudaDriver, 100, 950, 10, {{"correlation", 42}, {"return_value", 1}}),
      X("k", keys::kCatKernel, 101, 50, 30,
        {{"device", 2},
         {"stream", 3},
         {"correlation", 40},
         {"grid", {0, 0, 0}},
         {"block", {0, 0, 0}},
         {"registers_per_thread", 0},
         {"shared_memory", 0}}),
      X("Stream Synchronize", keys::kCatSync, 101, 110, 780,
        {{"context", 7}, {"correlation", 41}, {"device", 2}, {"stream", 3}}),
      flow('s', 100, 100, "1"),
      flow('f', 101, 110, "1"),
      X("CUPTI buffer flush", keys::kCatOverhead, 102, 1000, 100, {{"object", "thread 5"}}),
      meta(5),
      meta(8),
  };
  EXPECT_EQ(dump(p.take()), dump(expected));
  EXPECT_EQ(tracks, (std::vector<std::string>{"CUDA API thread 5", "GPU 2 stream 3", "CUPTI overhead"}));
  EXPECT_EQ(p.stats().records, 7u);
  EXPECT_EQ(p.stats().bad_timestamps, 1u);
  EXPECT_EQ(p.stats().dropped, 8u);
}

}  // namespace
}  // namespace shardscope::tracer::cupti
