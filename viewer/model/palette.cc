#include "viewer/model/palette.h"

namespace shardscope::viewer {

Rgb colour_of(model::IntervalClass cls, model::CollectiveKind coll) {
  using model::CollectiveKind;
  using model::IntervalClass;
  switch (cls) {
    case IntervalClass::Compute: return kCompute;
    case IntervalClass::Communication:
      switch (coll) {
        case CollectiveKind::AllGather: return kAllGather;
        case CollectiveKind::ReduceScatter: return kReduceScatter;
        case CollectiveKind::AllReduce: return kAllReduce;
        default: return kOtherCollective;
      }
    case IntervalClass::Memory: return kMemory;
    case IntervalClass::Sync: return kSync;
    case IntervalClass::Other: return kOtherDevice;
    case IntervalClass::Host: return kHost;
  }
  return kHost;
}

HostKind host_kind(std::string_view c) {
  // Kineto's categories for the CUDA runtime and driver calls, and for record_function / NVTX ranges.
  if (c == "cuda_runtime" || c == "cuda_driver" || c == "cuda_api") return HostKind::CudaApi;
  if (c == "user_annotation" || c == "gpu_user_annotation" || c == "nvtx" || c == "NVTX") return HostKind::UserRange;
  return HostKind::Op;
}

Rgb colour_of(HostKind k) {
  switch (k) {
    case HostKind::CudaApi: return kCudaApi;
    case HostKind::UserRange: return kUserRange;
    case HostKind::Op: return kHost;
  }
  return kHost;
}

std::vector<Rgb> host_colours_by_category(const model::StringTable& strings) {
  std::vector<Rgb> out(strings.size(), 0);
  for (size_t i = 0; i < strings.size(); ++i)
    if (HostKind k = host_kind(strings.str(model::StringId(i))); k != HostKind::Op) out[i] = colour_of(k);
  return out;
}

const std::vector<LegendEntry>& legend() {
  static const std::vector<LegendEntry> entries = {
      {"GPU compute", kCompute},
      {"all-gather", kAllGather},
      {"reduce-scatter", kReduceScatter},
      {"all-reduce", kAllReduce},
      {"other collective", kOtherCollective},
      {"memcpy / memset", kMemory},
      {"sync", kSync},
      {"other device work", kOtherDevice},
      {"CUDA API", kCudaApi},
      {"NVTX / user range", kUserRange},
      {"CPU op", kHost},
  };
  return entries;
}

}  // namespace shardscope::viewer
