// Which SPEC class a device event belongs to, and which collective a communication event is, from the
// names and arguments traces carry. The name rules are HTA's (hta/common/types.py) so that our
// whole-trace numbers agree with HTA's on the same file.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/event.h"

namespace shardscope::model {

// Classifies a device activity (kernel, memcpy, memset, sync) by name. Communication is checked first:
// names starting "nccl", "hip" or "hccl", or containing "ncclKernel"; memory: starting "Memcpy", "Memset"
// (optionally after "hip") or "dma"; sync: "...Sync..." or "Stream Wait Event"; compute: any other kernel
// whose name contains none of HTA's excluded patterns; anything else is Other.
IntervalClass classify_device_name(std::string_view name);

// The collective a kernel name says: "ncclKernel_AllReduce_RING_LL_Sum_float(...)" (NCCL < 2.19),
// "ncclDevKernel_AllGather_RING_LL(...)" (newer). Unknown for "ncclDevKernel_Generic" and names with no kind.
CollectiveKind collective_from_kernel_name(std::string_view name);

// The collective a c10d "Collective name" argument, a ProcessGroupNCCL "nccl:..." label or the trainer's
// range name says: "allreduce", "_allgather_base", "reduce_scatter_tensor_coalesced", "all_gather", ...
CollectiveKind collective_from_op_name(std::string_view name);

// Bytes of one element of a c10 dtype name ("Float", "BFloat16", "c10::Half", ...); 0 when unknown.
int dtype_size(std::string_view dtype);

// nccl-tests' bus bandwidth factor for a collective over n ranks: (n-1)/n for all_gather and
// reduce_scatter, 2(n-1)/n for all_reduce, 1 otherwise (and when n is unknown).
double busbw_factor(CollectiveKind kind, int n);

}  // namespace shardscope::model
