// Communication that is not NCCL's (model/comm_kernels.h: DeepEP, pplx-kernels, symmetric memory's all-to-all,
// MSCCL++, NCCL's device API, NVSHMEM) and NCCL's all-to-all, which runs as grouped send/recv kernels, named
// from the op that launched it (Kineto: c10d::alltoall_base_, record_param_comms, "nccl:all_to_all").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "analyzer/metrics/collectives.h"
#include "model/classify.h"
#include "model/comm_kernels.h"
#include "plugins/load/load.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace shardscope;
using model::CollectiveKind;
using model::IntervalClass;

namespace {

model::Rank load_moe_text(const std::string& text, bool keep_args) {
  test::TempDir d;
  std::ofstream(d.path() / "t.json", std::ios::binary) << text;
  plugins::LoadOptions o;
  o.keep_args = keep_args;
  plugins::LoadResult r = plugins::load({d.path() / "t.json"}, o);
  EXPECT_EQ(r.trace.ranks.size(), 1u);
  return std::move(r.trace.ranks.at(0));
}

std::map<std::string, const model::Event*> moe_by_name(const model::Rank& r) {
  std::map<std::string, const model::Event*> out;
  for (const auto& t : r.tracks)
    for (const auto& e : t.events)
      if (e.is_device()) out[std::string(r.str(e.name))] = &e;
  return out;
}

TEST(CommKernels, DeepEpDispatchAndCombineIntranodeInternodeAndLowLatency) {
  using model::other_collective_kernel;
  for (const char* ns : {"deep_ep::", "dpsk::ep::"}) {
    const std::string p = std::string("void ") + ns;
    EXPECT_EQ(other_collective_kernel(p + "intranode::dispatch<8, 768, 6144>(int4*, float*, int*, bool const*)"),
              CollectiveKind::AllToAllDispatch);
    EXPECT_EQ(other_collective_kernel(p + "intranode::notify_dispatch<8>(int const*, int*, int, int)"),
              CollectiveKind::AllToAllDispatch);
    EXPECT_EQ(other_collective_kernel(p + "intranode::cached_notify_combine<8>(void**, int*, int, int, int**)"),
              CollectiveKind::AllToAllCombine);
    EXPECT_EQ(other_collective_kernel(p + "intranode::combine<__nv_bfloat16, 8, 768>(__nv_bfloat16*, float*)"),
              CollectiveKind::AllToAllCombine);
    // Its parameters may name the other half: the function's own name decides.
    EXPECT_EQ(other_collective_kernel(p + "internode::dispatch<false, 8, 12, 8, 16, 2>(int4*, int const* combine_idx)"),
              CollectiveKind::AllToAllDispatch);
    EXPECT_EQ(other_collective_kernel(p + "internode::combine<__nv_bfloat16, 8, 4, 12>(int4*, void* dispatch_buf)"),
              CollectiveKind::AllToAllCombine);
    EXPECT_EQ(other_collective_kernel(p + "internode_ll::dispatch<true, 3, 7168>(void*, float*, int*)"),
              CollectiveKind::AllToAllDispatch);
    EXPECT_EQ(other_collective_kernel(p + "internode_ll::combine<false, 3, 7168, 9>(void*, void*)"),
              CollectiveKind::AllToAllCombine);
    EXPECT_EQ(other_collective_kernel(p + "internode::cached_notify<8>(int, int, int, int, void*)"),
              CollectiveKind::AllToAll);
    EXPECT_EQ(other_collective_kernel(p + "internode_ll::clean_low_latency_buffer<128>(int*, int, int*, int)"),
              CollectiveKind::AllToAll);
    EXPECT_EQ(other_collective_kernel(p + "intranode::barrier<8>(int**, int)"), CollectiveKind::Barrier);
    // The layout kernel counts tokens per rank on its own GPU: compute.
    EXPECT_EQ(other_collective_kernel(p + "layout::get_dispatch_layout<256, 32, 8>(long const*, int*)"),
              CollectiveKind::None);
    EXPECT_EQ(model::classify_device_name(p + "layout::get_dispatch_layout<256, 32, 8>(long const*, int*)"),
              IntervalClass::Compute);
    EXPECT_EQ(model::classify_device_name(p + "internode::combine<__nv_bfloat16, 8, 4, 12>(int4*)"),
              IntervalClass::Communication);
    EXPECT_EQ(model::collective_from_kernel_name(p + "internode::combine<__nv_bfloat16, 8, 4, 12>(int4*)"),
              CollectiveKind::AllToAllCombine);
  }
}

TEST(CommKernels, PplxSymmetricMemoryMscclppNcclDeviceApiAndNvshmem) {
  using model::other_collective_kernel;
  EXPECT_EQ(other_collective_kernel("void pplx::(anonymous namespace)::dispatchKernel<__nv_bfloat16, float, 10u, "
                                    "true, true>(int, unsigned long, ...)"),
            CollectiveKind::AllToAllDispatch);
  EXPECT_EQ(other_collective_kernel("void pplx::(anonymous namespace)::combineKernel<float, __nv_bfloat16, 10u, true, "
                                    "true>(float*, unsigned long)"),
            CollectiveKind::AllToAllCombine);
  EXPECT_EQ(other_collective_kernel("c10d::nvshmem_extension::allToAllV(void*, void*, long*, unsigned long, int)"),
            CollectiveKind::AllToAll);
  EXPECT_EQ(other_collective_kernel("c10d::nvshmem_extension::allToAllV_2d(void*, void*, long*, long*, unsigned long)"),
            CollectiveKind::AllToAll);
  EXPECT_EQ(other_collective_kernel("c10d::nvshmem_extension::exchangeSplitAndOffset(long*, long*, int)"),
            CollectiveKind::AllToAll);
  EXPECT_EQ(other_collective_kernel("void mscclpp::executionKernel<__half, mscclpp::LL16Packet, false>(int, __half*)"),
            CollectiveKind::Unknown);
  EXPECT_EQ(other_collective_kernel("void allreduce8<float>(float*, mscclpp::DeviceHandle<mscclpp::MemoryChannel>*)"),
            CollectiveKind::Unknown);
  EXPECT_EQ(other_collective_kernel("void lsaAllReduce<float>(ncclWindow_vidmem*, unsigned long, ncclDevComm)"),
            CollectiveKind::Unknown);
  EXPECT_EQ(other_collective_kernel("void nvshmemi_alltoall_threadgroup_kernel<int>(...)"), CollectiveKind::AllToAll);
  // Unknown is a collective of no known kind, still communication.
  EXPECT_EQ(model::classify_device_name("void mscclpp::executionKernel<float>(int)"), IntervalClass::Communication);
  // Names that only look alike stay compute.
  EXPECT_EQ(other_collective_kernel("void at::native::index_put_kernel<combine_op>(...)"), CollectiveKind::None);
  EXPECT_EQ(other_collective_kernel("void moe_dispatch_permute<float>(float*, int*)"), CollectiveKind::None);
  EXPECT_EQ(other_collective_kernel("void at::native::reduce_kernel<512, 1>(...)"), CollectiveKind::None);
}

TEST(CommKernels, EveryRowNamesItsLibraryAndKindsHaveTheAllToAllBusFactor) {
  std::set<std::string_view> libraries;
  for (const model::CommKernelRule& r : model::comm_kernel_rules()) {
    EXPECT_FALSE(r.library.empty());
    EXPECT_FALSE(r.scope.empty() && r.needle.empty()) << r.library;  // a row matching every name
    libraries.insert(r.library);
  }
  for (const char* l : {"DeepEP", "pplx-kernels", "PyTorch symmetric memory", "MSCCL++", "NCCL device API", "NVSHMEM"})
    EXPECT_TRUE(libraries.count(l)) << l;
  EXPECT_EQ(model::to_string(CollectiveKind::AllToAllDispatch), "all_to_all_dispatch");
  EXPECT_EQ(model::to_string(CollectiveKind::AllToAllCombine), "all_to_all_combine");
  EXPECT_DOUBLE_EQ(model::busbw_factor(CollectiveKind::AllToAllDispatch, 64), 63.0 / 64);
  EXPECT_DOUBLE_EQ(model::busbw_factor(CollectiveKind::AllToAllCombine, 4), 0.75);
  EXPECT_TRUE(model::busbw_needs_group(CollectiveKind::AllToAllCombine));
  EXPECT_TRUE(model::busbw_needs_group(CollectiveKind::AllReduce));
  EXPECT_FALSE(model::busbw_needs_group(CollectiveKind::SendRecv));
}

// One MoE layer's expert-parallel exchange through DeepEP beside a GEMM: no NCCL kernel at all.
const char* kDeepEp = R"J({"distributedInfo": {"rank": 3, "world_size": 64, "backend": "nccl"}, "traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*)", "pid": 0, "tid": 7, "ts": 0, "dur": 2, "args": {"stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "void deep_ep::internode::notify_dispatch<false, 8>(int const*, int*)", "pid": 0, "tid": 20, "ts": 2, "dur": 3, "args": {"stream": 20}},
  {"ph": "X", "cat": "kernel", "name": "void deep_ep::internode::dispatch<false, 8, 12, 8, 16, 2>(int4*, float*)", "pid": 0, "tid": 20, "ts": 5, "dur": 40, "args": {"stream": 20}},
  {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32", "pid": 0, "tid": 7, "ts": 10, "dur": 50, "args": {"stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "void deep_ep::internode::combine<__nv_bfloat16, 8, 4, 12>(int4*)", "pid": 0, "tid": 20, "ts": 60, "dur": 30, "args": {"stream": 20}}
]})J";

TEST(CommKernels, DeepEpKernelsAreCommunicationByHalfOnAKinetoTrace) {
  for (bool keep : {false, true}) {
    model::Rank r = load_moe_text(kDeepEp, keep);
    auto ev = moe_by_name(r);
    EXPECT_EQ(ev.at("void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*)")->cls,
              IntervalClass::Compute);
    EXPECT_EQ(ev.at("void deep_ep::internode::combine<__nv_bfloat16, 8, 4, 12>(int4*)")->coll,
              CollectiveKind::AllToAllCombine);
    auto stats = metrics::collective_stats(r);
    ASSERT_EQ(stats.size(), 2u);
    EXPECT_EQ(stats[0].kind, CollectiveKind::AllToAllDispatch);
    EXPECT_EQ(stats[0].count, 2);
    EXPECT_EQ(stats[0].time_ns, 43000);
    EXPECT_EQ(stats[1].kind, CollectiveKind::AllToAllCombine);
    EXPECT_EQ(stats[1].time_ns, 30000);
    EXPECT_EQ(r.world_size, 64);
  }
}

// NCCL's all-to-all: grouped sends and receives, its kernels named SendRecv. Four launches, each a
// ncclDevKernel_SendRecv linked to its launch by correlation: (1) under c10d::alltoall_base_ >
// record_param_comms (all_to_allv, 4 ranks, 1024 floats) > nccl:all_to_all, the kernel's External id that of
// the innermost op only; (2) under a bare "nccl:all_to_all" range; (3) under "c10d::alltoall_" alone; (4) a
// plain send under c10d::send, which stays a send/recv.
const char* kNcclAllToAll = R"J({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "c10d::alltoall_base_", "pid": 1, "tid": 1, "ts": 0, "dur": 20, "args": {"External id": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 1, "dur": 18, "args": {"External id": 2, "Collective name": "all_to_allv", "In msg nelems": 1024, "Out msg nelems": 1024, "Group size": 4, "dtype": "Float"}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_to_all", "pid": 1, "tid": 1, "ts": 2, "dur": 16, "args": {"External id": 3}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 2, "args": {"correlation": 101, "External id": 3}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 20, "ts": 30, "dur": 10, "args": {"stream": 20, "correlation": 101, "External id": 3}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_to_all", "pid": 1, "tid": 1, "ts": 100, "dur": 10, "args": {"External id": 4}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 105, "dur": 2, "args": {"correlation": 102, "External id": 4}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(x)", "pid": 0, "tid": 20, "ts": 120, "dur": 10, "args": {"stream": 20, "correlation": 102, "External id": 4}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::alltoall_", "pid": 1, "tid": 1, "ts": 200, "dur": 10, "args": {"External id": 5}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 205, "dur": 2, "args": {"correlation": 103, "External id": 6}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)", "pid": 0, "tid": 20, "ts": 220, "dur": 10, "args": {"stream": 20, "correlation": 103, "External id": 6}},
  {"ph": "X", "cat": "cpu_op", "name": "c10d::send", "pid": 1, "tid": 1, "ts": 300, "dur": 10, "args": {"External id": 7}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 305, "dur": 2, "args": {"correlation": 104, "External id": 7}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(send)", "pid": 0, "tid": 20, "ts": 320, "dur": 10, "args": {"stream": 20, "correlation": 104, "External id": 7}}
], "distributedInfo": {"rank": 0, "world_size": 4}})J";

TEST(NcclAllToAll, SendRecvKernelsLaunchedByAnAllToAllOpAreAllToAllOnKineto) {
  for (bool keep : {false, true}) {
    model::Rank r = load_moe_text(kNcclAllToAll, keep);
    auto ev = moe_by_name(r);
    const model::Event* nested = ev.at("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)");
    EXPECT_EQ(nested->coll, CollectiveKind::AllToAll);
    EXPECT_EQ(nested->bytes, 4096);  // record_param_comms': 1024 floats in
    EXPECT_EQ(nested->group_size, 4);
    EXPECT_EQ(ev.at("ncclDevKernel_SendRecv(x)")->coll, CollectiveKind::AllToAll);
    EXPECT_EQ(ev.at("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)")->coll, CollectiveKind::AllToAll);
    EXPECT_EQ(ev.at("ncclDevKernel_SendRecv(send)")->coll, CollectiveKind::SendRecv);
    auto stats = metrics::collective_stats(r);
    ASSERT_EQ(stats.size(), 2u);
    EXPECT_EQ(stats[0].kind, CollectiveKind::SendRecv);
    EXPECT_EQ(stats[0].count, 1);
    EXPECT_EQ(stats[1].kind, CollectiveKind::AllToAll);
    EXPECT_EQ(stats[1].count, 3);
    // busbw = bytes x (n-1)/n over the sized kernel's time: 4096 x 3/4 over 10 µs.
    ASSERT_TRUE(stats[1].busbw_gbps().has_value());
    EXPECT_DOUBLE_EQ(*stats[1].busbw_gbps(), 4096.0 * 0.75 / 10000.0);
  }
}

}  // namespace
