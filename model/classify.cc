#include "model/classify.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "model/comm_kernels.h"
#include "tracer/format/nccl_names.h"

namespace shardscope::model {
namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool has(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

}  // namespace

IntervalClass classify_device_name(std::string_view n) {
  // Not in HTA's pattern, which counts these as compute: collectives that do not run as NCCL kernels.
  if (other_collective_kernel(n) != CollectiveKind::None) return IntervalClass::Communication;
  return hta_device_class(n);
}

IntervalClass hta_device_class(std::string_view n) {
  // CommunicateKernelGroupingPattern: (^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)
  if (starts(n, "nccl") || starts(n, "hip") || starts(n, "hccl") || has(n, "ncclKernel"))
    return IntervalClass::Communication;
  // MemoryKernelGroupingPattern: (^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)  ("hip" already went to communication)
  if (starts(n, "Memcpy") || starts(n, "Memset") || starts(n, "dma")) return IntervalClass::Memory;
  // Not compute: (.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)|(cuda.*LaunchKernel)|(^runFunction)
  // |(^job_exe)|(^packet)|(^pe_exe)|(^cpum_exe_subgraph)|(^collective_subgraph_execution)
  if (has(n, "Sync") || starts(n, "Stream Wait Event")) return IntervalClass::Sync;
  if (has(n, "Memcpy") || has(n, "Memset") || has(n, "dma") || starts(n, "runFunction") || starts(n, "job_exe") ||
      starts(n, "packet") || starts(n, "pe_exe") || starts(n, "cpum_exe_subgraph") ||
      starts(n, "collective_subgraph_execution"))
    return IntervalClass::Other;
  if (auto c = n.find("cuda"); c != std::string_view::npos && n.find("LaunchKernel", c) != std::string_view::npos)
    return IntervalClass::Other;
  return IntervalClass::Compute;
}

CollectiveKind collective_from_kernel_name(std::string_view n) {
  if (!trace::is_nccl_kernel(n)) {
    CollectiveKind k = other_collective_kernel(n);
    return k == CollectiveKind::None ? CollectiveKind::Unknown : k;
  }
  CollectiveKind k = collective_from_op_name(trace::nccl_kernel_collective(n));
  return k == CollectiveKind::None ? CollectiveKind::Unknown : k;
}

CollectiveKind other_collective_kernel(std::string_view n) {
  std::optional<CommKernelRule> r = match_comm_kernel(n);
  return r ? r->kind : CollectiveKind::None;
}

CollectiveKind collective_from_launching_op(std::string_view op) {
  // The libraries whose ops are collectives when their name says one.
  static constexpr std::string_view kNamespaces[] = {"c10d::", "_c10d_functional::", "c10d_functional::", "symm_mem::",
                                                     "vllm::", "_C_custom_ar::",     "sgl_kernel::",      "sglang::"};
  bool known = false;
  for (std::string_view ns : kNamespaces)
    if (starts(op, ns)) {
      op.remove_prefix(ns.size());
      known = true;
      break;
    }
  if (!known) return CollectiveKind::None;
  // How the op does it is not what it does: "multimem_one_shot_all_reduce" is an all-reduce.
  for (std::string_view how : {"multimem_", "one_shot_", "two_shot_", "fused_"})
    if (starts(op, how)) op.remove_prefix(how.size());
  CollectiveKind k = collective_from_op_name(op);
  return k == CollectiveKind::Unknown ? CollectiveKind::None : k;
}

CollectiveKind collective_from_op_name(std::string_view name) {
  // Normalize: lower case, without '_' and a leading "nccl:" or "c10d::", so "_allgather_base",
  // "all_gather_into_tensor_coalesced", "AllGather" and "nccl:_all_gather_base" all read "allgather...".
  if (auto colon = name.rfind(':'); colon != std::string_view::npos) name = name.substr(colon + 1);
  std::string s;
  s.reserve(name.size());
  for (char c : name)
    if (c != '_') s.push_back(char(std::tolower(static_cast<unsigned char>(c))));
  if (s.empty()) return CollectiveKind::None;
  if (starts(s, "allgather")) return CollectiveKind::AllGather;
  if (starts(s, "reducescatter")) return CollectiveKind::ReduceScatter;
  if (starts(s, "allreduce")) return CollectiveKind::AllReduce;
  if (starts(s, "broadcast") || starts(s, "bcast")) return CollectiveKind::Broadcast;
  if (starts(s, "alltoall")) return CollectiveKind::AllToAll;
  if (starts(s, "sendrecv") || starts(s, "send") || starts(s, "recv")) return CollectiveKind::SendRecv;
  if (starts(s, "reduce")) return CollectiveKind::Reduce;
  if (starts(s, "barrier")) return CollectiveKind::Barrier;
  return CollectiveKind::Unknown;
}

int dtype_size(std::string_view d) {
  if (auto colon = d.rfind(':'); colon != std::string_view::npos) d = d.substr(colon + 1);
  std::string s;
  for (char c : d) s.push_back(char(std::tolower(static_cast<unsigned char>(c))));
  if (s == "double" || s == "long" || s == "int64" || s == "long int" || s == "complexfloat" || s == "uint64") return 8;
  if (s == "float" || s == "int" || s == "int32" || s == "uint32" || s == "float32") return 4;
  if (s == "half" || s == "bfloat16" || s == "short" || s == "int16" || s == "float16" || s == "uint16") return 2;
  if (s == "byte" || s == "char" || s == "bool" || s == "int8" || s == "uint8" || s == "int8_t" || starts(s, "float8"))
    return 1;
  return 0;
}

bool busbw_needs_group(CollectiveKind kind) { return busbw_factor(kind, 3) != 1.0; }  // n = 2 gives all_reduce 1

double busbw_factor(CollectiveKind kind, int n) {
  if (n <= 0) return 1.0;
  switch (kind) {
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllToAll:
    case CollectiveKind::AllToAllDispatch:
    case CollectiveKind::AllToAllCombine: return double(n - 1) / n;
    case CollectiveKind::AllReduce: return 2.0 * (n - 1) / n;
    default: return 1.0;
  }
}

}  // namespace shardscope::model
