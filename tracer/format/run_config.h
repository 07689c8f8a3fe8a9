// The values of run_config's sharding and backward_prefetch keys (keys::kCfgSharding, kCfgBackwardPrefetch):
// the contract between the trainer that writes them and the analysis that reads them, in one place.
#pragma once

#include <optional>
#include <string_view>

namespace shardscope::trace {

enum class Sharding { NoShard, Zero1, ShardGradOp, FullShard, HybridShard };
enum class BackwardPrefetch { None, Pre, Post };

// "no_shard", "zero1", "shard_grad_op", "full_shard", "hybrid_shard"; nullopt for anything else.
std::optional<Sharding> sharding_from_name(std::string_view s);
const char* sharding_name(Sharding s);
// ZeRO's stage: 0 (no_shard), 1, 2, 3 (full_shard; hybrid_shard is 3 within its sharding group).
int zero_stage(Sharding s);
inline constexpr const char* kShardingNames = "no_shard, zero1, shard_grad_op, full_shard, hybrid_shard";

// "none", "pre", "post"; nullopt for anything else.
std::optional<BackwardPrefetch> prefetch_from_name(std::string_view s);
const char* prefetch_name(BackwardPrefetch p);
inline constexpr const char* kPrefetchNames = "none, pre, post";

}  // namespace shardscope::trace
