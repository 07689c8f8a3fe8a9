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

}  // namespace shardscope::viewer
