#include "training/fsdp/options.h"

#include <stdexcept>

namespace shardscope::train {

Sharding parse_sharding(const std::string& s) {
  if (auto v = trace::sharding_from_name(s)) return *v;
  throw std::invalid_argument("unknown --sharding '" + s + "' (" + trace::kShardingNames + ")");
}

BackwardPrefetch parse_prefetch(const std::string& s) {
  if (auto v = trace::prefetch_from_name(s)) return *v;
  throw std::invalid_argument("unknown --backward-prefetch '" + s + "' (" + trace::kPrefetchNames + ")");
}

}  // namespace shardscope::train
