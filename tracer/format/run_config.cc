#include "tracer/format/run_config.h"

namespace shardscope::trace {

std::optional<Sharding> sharding_from_name(std::string_view s) {
  for (Sharding v :
       {Sharding::NoShard, Sharding::Zero1, Sharding::ShardGradOp, Sharding::FullShard, Sharding::HybridShard})
    if (s == sharding_name(v)) return v;
  return std::nullopt;
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
    case Sharding::FullShard:
    case Sharding::HybridShard: return 3;
  }
  return 3;
}

std::optional<BackwardPrefetch> prefetch_from_name(std::string_view s) {
  for (BackwardPrefetch v : {BackwardPrefetch::None, BackwardPrefetch::Pre, BackwardPrefetch::Post})
    if (s == prefetch_name(v)) return v;
  return std::nullopt;
}

const char* prefetch_name(BackwardPrefetch p) {
  switch (p) {
    case BackwardPrefetch::None: return "none";
    case BackwardPrefetch::Pre: return "pre";
    case BackwardPrefetch::Post: return "post";
  }
  return "?";
}

}  // namespace shardscope::trace
