// The FSDP configuration: sharding strategy, prefetch, precision, memory savers.
#pragma once

#include <string>

#include "training/comm/group.h"

namespace shardscope::train {

enum class Sharding { NoShard, Zero1, ShardGradOp, FullShard, HybridShard };
enum class BackwardPrefetch { None, Pre, Post };

Sharding parse_sharding(const std::string& s);  // throws std::invalid_argument
const char* sharding_name(Sharding s);
int zero_stage(Sharding s);  // 0, 1, 2, 3 (hybrid_shard: 3 within a node)
BackwardPrefetch parse_prefetch(const std::string& s);
const char* prefetch_name(BackwardPrefetch p);

struct FsdpOptions {
  Sharding sharding = Sharding::FullShard;
  BackwardPrefetch backward_prefetch = BackwardPrefetch::Pre;
  bool forward_prefetch = false;
  int limit_all_gathers = 2;  // all-gathers issued but not yet consumed by compute
  DType param_dtype = DType::F32;
  DType reduce_dtype = DType::F32;
  bool activation_checkpointing = false;
  bool cpu_offload = false;  // fp32 shard, gradient shard and optimizer state on the host; AdamW runs there
  int ranks_per_node = 0;  // hybrid_shard: the sharding group size
  int collective_timeout_s = 0;  // a collective's deadline from its issue; 0: 30 s on CPU, 300 s on a GPU
  bool cuda = false;       // tensors on CUDA device `device`, collectives over NCCL
  int device = 0;
  // A planted straggler, for checking diagnostics: this rank sleeps this long before each unit's backward
  // (so before the all-gathers it issues there), marked by a "planted_delay" range in its trace.
  int backward_delay_ms = 0;
};

}  // namespace shardscope::train
