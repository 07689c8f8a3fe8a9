#include "model/comm_kernels.h"

namespace shardscope::model {
namespace {

using K = CollectiveKind;

// Within a library, the more specific row first: DeepEP's "get_dispatch_layout" before its "dispatch".
constexpr CommKernelRule kRules[] = {
    // PyTorch symmetric memory (torch/csrc/distributed/c10d/symm_mem), CUDA and Triton kernels.
    {"PyTorch symmetric memory", "", "multimem_one_shot_all_reduce", K::AllReduce},
    {"PyTorch symmetric memory", "", "multimem_one_shot_reduce", K::Reduce},
    {"PyTorch symmetric memory", "", "multimem_all_reduce", K::AllReduce},
    {"PyTorch symmetric memory", "", "multimem_all_gather", K::AllGather},
    {"PyTorch symmetric memory", "", "multimem_reduce_scatter", K::ReduceScatter},
    {"PyTorch symmetric memory", "", "one_shot_all_reduce", K::AllReduce},
    {"PyTorch symmetric memory", "", "two_shot_all_reduce", K::AllReduce},
    // all_to_all_vdev (nvshmem_extension.cu): the splits' exchange, then the data's.
    {"PyTorch symmetric memory", "", "allToAllV", K::AllToAll},
    {"PyTorch symmetric memory", "", "exchangeSplitAndOffset", K::AllToAll},
    // vLLM's custom all-reduce (csrc/custom_all_reduce.cuh), which SGLang carries too.
    {"vLLM / SGLang custom all-reduce", "", "cross_device_reduce_1stage", K::AllReduce},
    {"vLLM / SGLang custom all-reduce", "", "cross_device_reduce_2stage", K::AllReduce},
    // RCCL's MSCCL kernels ("mscclKernel_Sum_float_LL..."): a collective of a kind the name does not say.
    {"RCCL MSCCL", "", "mscclKernel", K::Unknown},
    // DeepEP's expert-parallel all-to-all (csrc/kernels: intranode, internode, internode_ll = low latency):
    // notify_dispatch, dispatch, cached_notify_combine, combine; its layout kernel only counts tokens.
    {"DeepEP", "deep_ep::", "get_dispatch_layout", K::None},
    {"DeepEP", "deep_ep::", "combine", K::AllToAllCombine},
    {"DeepEP", "deep_ep::", "dispatch", K::AllToAllDispatch},
    {"DeepEP", "deep_ep::", "barrier", K::Barrier},
    {"DeepEP", "deep_ep::", "", K::AllToAll},  // cached_notify, clean_low_latency_buffer
    {"DeepEP", "dpsk::ep::", "get_dispatch_layout", K::None},
    {"DeepEP", "dpsk::ep::", "combine", K::AllToAllCombine},
    {"DeepEP", "dpsk::ep::", "dispatch", K::AllToAllDispatch},
    {"DeepEP", "dpsk::ep::", "barrier", K::Barrier},
    {"DeepEP", "dpsk::ep::", "", K::AllToAll},
    // Perplexity's pplx-kernels (csrc/all_to_all): dispatchKernel and combineKernel, intra- and internode.
    {"pplx-kernels", "pplx::", "combine", K::AllToAllCombine},
    {"pplx-kernels", "pplx::", "dispatch", K::AllToAllDispatch},
    // MSCCL++: its executor's and algorithms' kernels, or a kernel taking its channels.
    {"MSCCL++", "mscclpp::", "", K::Unknown},
    // NCCL's device API (2.28+): a kernel of the user's that takes a device communicator or a window.
    {"NCCL device API", "ncclDevComm", "", K::Unknown},
    {"NCCL device API", "ncclWindow", "", K::Unknown},
    // NVSHMEM's collectives name the collective after "nvshmem": fcollect is its all-gather; its put/get/signal
    // kernels move data but are no collective.
    {"NVSHMEM", "nvshmem", "alltoall", K::AllToAll},
    {"NVSHMEM", "nvshmem", "fcollect", K::AllGather},
    {"NVSHMEM", "nvshmem", "allgather", K::AllGather},
    {"NVSHMEM", "nvshmem", "reducescatter", K::ReduceScatter},
    {"NVSHMEM", "nvshmem", "reduce", K::AllReduce},
    {"NVSHMEM", "nvshmem", "broadcast", K::Broadcast},
    {"NVSHMEM", "nvshmem", "barrier", K::Barrier},
    {"NVSHMEM", "nvshmem", "sync_all", K::Barrier},
};

// `s` up to its parameter list: the first '(' outside template arguments that is not "(anonymous namespace)".
std::string_view before_parameters(std::string_view s) {
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>' && depth > 0)
      --depth;
    else if (s[i] == '(' && depth == 0) {
      if (s.substr(i).starts_with(kAnonymous)) i += kAnonymous.size() - 1;
      else
        return s.substr(0, i);
    }
  }
  return s;
}

bool matches(const CommKernelRule& r, std::string_view name) {
  if (r.scope.empty()) return name.find(r.needle) != std::string_view::npos;
  const size_t at = name.find(r.scope);
  if (at == std::string_view::npos) return false;
  // The function's own name: not its parameters, whose types may say anything.
  return before_parameters(name.substr(at)).find(r.needle) != std::string_view::npos;
}

}  // namespace

std::span<const CommKernelRule> comm_kernel_rules() { return kRules; }

std::optional<CommKernelRule> match_comm_kernel(std::string_view name) {
  for (const CommKernelRule& r : kRules)
    if (matches(r, name)) return r;
  return std::nullopt;
}

}  // namespace shardscope::model
