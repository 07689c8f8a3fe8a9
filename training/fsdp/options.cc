#include "training/fsdp/options.h"

#include <stdexcept>

namespace shardscope::train {

Sharding parse_sharding(const std::string& s) {
  if (s == "no_shard") return Sharding::NoShard;
  if (s == "zero1") return Sharding::Zero1;
  if (s == "shard_grad_op") return Sharding::ShardGradOp;
  if (s == "full_shard") return Sharding::FullShard;
  if (s == "hybrid_shard") return Sharding::HybridShard;
  throw std::invalid_argument("unknown --sharding '" + s + "' (no_shard, zero1, shard_grad_op, full_shard, hybrid_shard)");
}

const char* sharding_name(Sharding s) {
  switch (s) {
    case Sharding::NoShard: return "no_shard";
    case Sharding::Zero1: return "zero1";
    case Sharding::ShardGradOp: return "shard_grad_op";
    case Sharding::FullShard: return "full_shard";
    case Sharding::HybridShard: return "hybrid_shard";
  }
  return "?";
}

int zero_stage(Sharding s) {
  switch (s) {
    case Sharding::NoShard: return 0;
    case Sharding::Zero1: return 1;
    case Sharding::ShardGradOp: return 2;
    default: return 3;
  }
}

BackwardPrefetch parse_prefetch(const std::string& s) {
  if (s == "none") return BackwardPrefetch::None;
  if (s == "pre") return BackwardPrefetch::Pre;
  if (s == "post") return BackwardPrefetch::Post;
  throw std::invalid_argument("unknown --backward-prefetch '" + s + "' (none, pre, post)");
}

const char* prefetch_name(BackwardPrefetch p) {
  return p == BackwardPrefetch::None ? "none" : p == BackwardPrefetch::Pre ? "pre" : "post";
}

}  // namespace shardscope::train
