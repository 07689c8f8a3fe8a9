// NCCL's kernel and NVTX range names, and the collective each stands for: the one rule the CUPTI tracer
// (recording) and the importers (reading Kineto's and older shardscope traces) share.
#pragma once

#include <string>
#include <string_view>

namespace shardscope::trace {

// True for NCCL's kernels: "ncclDevKernel_*" (NCCL 2.19+), "ncclKernel_*" (2.8-2.18), demangled or not.
bool is_nccl_kernel(std::string_view name);

// The collective kind a kernel name says (keys::kAllGather, ...: "all_gather", "reduce_scatter",
// "all_reduce", "broadcast", "reduce", "send_recv", "all_to_all"), or "" when it does not say
// (ncclDevKernel_Generic carries any batch of collectives).
std::string nccl_kernel_collective(std::string_view name);

// The same for one of NCCL's NVTX range names ("ncclAllGather", "ncclSend", ...), or "" for the ranges
// that are not one collective (ncclGroupStart/End, ncclCommInitRank, ...).
std::string nccl_range_collective(std::string_view name);

}  // namespace shardscope::trace
