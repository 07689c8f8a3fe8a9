// The small parts of the CUPTI backend: names, NCCL recognition, the buffer pool, the clock fit.
#include <gtest/gtest.h>

#include <cupti.h>

#include <set>

#include "tracer/cupti/buffer_pool.h"
#include "tracer/cupti/gpu_clock.h"
#include "tracer/cupti/names.h"
#include "tracer/cupti/nccl.h"
#include "tracer/host/clock.h"

namespace shardscope::tracer::cupti {
namespace {

TEST(Names, ApiNamesWithoutVersionSuffixAndDemangledKernels) {
  EXPECT_EQ(api_name(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000), "cudaLaunchKernel");
  EXPECT_EQ(api_name(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020), "cudaMemcpyAsync");
  EXPECT_EQ(api_name(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx), "cuLaunchKernelEx");
  EXPECT_EQ(api_name(CUPTI_ACTIVITY_KIND_DRIVER, 0xfffff), "driver call 1048575");
  EXPECT_EQ(demangle("_Z9vectorAddPfS_i"), "vectorAdd(float*, float*, int)");
  EXPECT_EQ(demangle("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(demangle("_Znot a symbol"), "_Znot a symbol");
  EXPECT_EQ(demangle(nullptr), "?");
  EXPECT_EQ(fill("GPU {} stream {}", 1, 7), "GPU 1 stream 7");
  EXPECT_EQ(fill("GPU {} synchronization", -1), "GPU -1 synchronization");
}

TEST(Nccl, KernelNamesOfBothFamilies) {
  EXPECT_TRUE(is_nccl_kernel("_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE"));
  EXPECT_TRUE(is_nccl_kernel("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"));
  EXPECT_TRUE(is_nccl_kernel("ncclKernel_AllReduce_RING_LL_Sum_float"));
  EXPECT_FALSE(is_nccl_kernel("my_ncclKernel_lookalike"));
  EXPECT_FALSE(is_nccl_kernel("_Zx9ncclKernel_AllReduce"));
  EXPECT_FALSE(is_nccl_kernel("vectorAdd(float*)"));
  EXPECT_EQ(nccl_kernel_collective("ncclDevKernel_AllGather_RING_LL(x)"), "all_gather");
  EXPECT_EQ(nccl_kernel_collective("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(x)"), "reduce_scatter");
  EXPECT_EQ(nccl_kernel_collective("ncclDevKernel_AllReduce_Sum_bf16_RING_LL"), "all_reduce");
  EXPECT_EQ(nccl_kernel_collective("ncclKernel_Broadcast_RING_LL_Sum_int8_t"), "broadcast");
  EXPECT_EQ(nccl_kernel_collective("ncclKernel_Reduce_RING_LL_Sum_float"), "reduce");
  EXPECT_EQ(nccl_kernel_collective("ncclDevKernel_SendRecv(x)"), "send_recv");
  EXPECT_EQ(nccl_kernel_collective("ncclDevKernel_Generic(x)"), "");
  EXPECT_EQ(nccl_range_collective("ncclAllGather"), "all_gather");
  EXPECT_EQ(nccl_range_collective("ncclSend"), "send_recv");
  EXPECT_EQ(nccl_range_collective("ncclAlltoAll"), "all_to_all");
  EXPECT_EQ(nccl_range_collective("ncclGroupEnd"), "");
  EXPECT_EQ(nccl_range_collective("ncclCommInitRank"), "");
}

TEST(BufferPool, BoundedAlignedAndReused) {
  BufferPool pool(1000, 2);
  uint8_t* a = pool.acquire();
  uint8_t* b = pool.acquire();
  ASSERT_TRUE(a && b);
  EXPECT_NE(a, b);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % ACTIVITY_RECORD_ALIGNMENT, 0u);
  EXPECT_EQ(pool.acquire(), nullptr);  // the bound: CUPTI drops and counts instead
  EXPECT_EQ(pool.refused(), 1u);
  pool.release(a);
  EXPECT_EQ(pool.acquire(), a);
  EXPECT_EQ(pool.allocated(), 2u);
  EXPECT_EQ(pool.buffer_bytes(), 1000u);
}

TEST(GpuClock, FindsAKnownOffsetWithinTheBracket) {
  constexpr int64_t kOffset = 1'234'567'891;
  ClockFit fit = calibrate([] { return uint64_t(now_ns() - kOffset); });
  EXPECT_LE(std::abs(fit.offset_ns - kOffset), fit.bracket_ns + 1);
  EXPECT_GE(fit.bracket_ns, 0);
  EXPECT_LT(fit.bracket_ns, 1'000'000);
}

TEST(GpuClock, MapsRealtimeLikeTheTracesClockPairs) {
  // CUPTI's own clock on Linux is CLOCK_REALTIME: the fit must agree with the trace's (monotonic, realtime) pair.
  ClockFit fit = calibrate([] {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec);
  });
  ClockPair pair = sample_clock_pair();
  EXPECT_LE(std::abs(fit.offset_ns - (pair.monotonic_ns - pair.realtime_ns)),
            fit.bracket_ns + pair.bracket_ns + 100'000);
}

}  // namespace
}  // namespace shardscope::tracer::cupti
