// Which SPEC class a device event belongs to, and which collective a communication event is, from the
// names and arguments traces carry. The name rules are HTA's (hta/common/types.py) so that our
// whole-trace numbers agree with HTA's on the same file.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/event.h"

namespace shardscope::model {

// Classifies a device activity (kernel, memcpy, memset, sync) by name. Communication is checked first:
// names starting "nccl", "hip" or "hccl", or containing "ncclKernel" (HTA's rule), and the collective
// kernels that are not NCCL's (other_collective_kernel below); memory: starting "Memcpy", "Memset"
// (optionally after "hip") or "dma"; sync: "...Sync..." or "Stream Wait Event"; compute: any other kernel
// whose name contains none of HTA's excluded patterns; anything else is Other.
IntervalClass classify_device_name(std::string_view name);

// HTA's rule alone (hta/common/types.py), without the other collective kernels: what HTA's own numbers
// count as compute, for the breakdown that is compared with HTA's.
IntervalClass hta_device_class(std::string_view name);

// The collective a kernel name says: "ncclKernel_AllReduce_RING_LL_Sum_float(...)" (NCCL < 2.19),
// "ncclDevKernel_AllGather_RING_LL(...)" (newer). Unknown for "ncclDevKernel_Generic" and names with no kind.
CollectiveKind collective_from_kernel_name(std::string_view name);

// The collective a kernel that is not NCCL's carries out, from the table of known libraries
// (comm_kernels.h): PyTorch symmetric memory ("multimem_all_reduce_kernel", "allToAllV", ...), vLLM's and
// SGLang's custom all-reduce, DeepEP's and pplx-kernels' dispatch and combine, MSCCL++, NCCL's device API,
// NVSHMEM's collectives, RCCL's MSCCL kernels. None for any other name (so Unknown means a collective of no
// known kind).
CollectiveKind other_collective_kernel(std::string_view name);

// The collective a CPU op that launches one carries out, by the op's name: c10d's, functional c10d's,
// symmetric memory's and vLLM's/SGLang's ops ("c10d::allreduce_", "_c10d_functional::all_gather_into_tensor",
// "symm_mem::multimem_all_reduce_", "vllm::all_reduce", "_C_custom_ar::all_reduce"). None for any other op,
// and for ops of those libraries that are no collective ("vllm::unified_attention", "c10d::wait").
CollectiveKind collective_from_launching_op(std::string_view op);

// The collective a c10d "Collective name" argument, a ProcessGroupNCCL "nccl:..." label or the trainer's
// range name says: "allreduce", "_allgather_base", "reduce_scatter_tensor_coalesced", "all_gather", ...
CollectiveKind collective_from_op_name(std::string_view name);

// Bytes of one element of a c10 dtype name ("Float", "BFloat16", "c10::Half", ...); 0 when unknown.
int dtype_size(std::string_view dtype);

// nccl-tests' bus bandwidth factor for a collective over n ranks: (n-1)/n for all_gather, reduce_scatter
// and all_to_all (its dispatch and combine too), 2(n-1)/n for all_reduce, 1 otherwise (and when n is unknown).
double busbw_factor(CollectiveKind kind, int n);

// Whether busbw_factor depends on the group size (so busbw is n/a where the trace does not say it).
bool busbw_needs_group(CollectiveKind kind);

}  // namespace shardscope::model
