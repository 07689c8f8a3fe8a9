// The FSDP configuration: sharding strategy, prefetch, precision, memory savers.
#pragma once

#include <string>

#include "tracer/format/run_config.h"
#include "training/comm/group.h"

namespace shardscope::train {

// The values are the trace's run_config vocabulary (tracer/format/run_config.h), which the analysis reads.
using trace::BackwardPrefetch;
using trace::prefetch_name;
using trace::Sharding;
using trace::sharding_name;
using trace::zero_stage;

Sharding parse_sharding(const std::string& s);  // throws std::invalid_argument
BackwardPrefetch parse_prefetch(const std::string& s);

struct FsdpOptions {
  Sharding sharding = Sharding::FullShard;
  BackwardPrefetch backward_prefetch = BackwardPrefetch::Pre;
  bool forward_prefetch = false;
  int limit_all_gathers = 2;  // all-gathers issued but not yet consumed by compute
  DType param_dtype = DType::F32;
  DType reduce_dtype = DType::F32;
  bool activation_checkpointing = false;
  bool sdpa = false;             // at::scaled_dot_product_attention (libtorch 2.x), else the block's own attention
  bool cpu_offload = false;      // fp32 shard, gradient shard and optimizer state on the host; AdamW runs there
  int ranks_per_node = 0;        // hybrid_shard: the sharding group size
  int collective_timeout_s = 0;  // a collective's deadline from its issue; 0: 30 s on CPU, 300 s on a GPU
  bool cuda = false;             // tensors on CUDA device `device`, collectives over NCCL
  int device = 0;
  // A planted straggler, for checking diagnostics: rank `slow_rank` (every rank knows which) sleeps
  // backward_delay_ms before the all-gathers it issues in each unit's backward, marked by a "planted_delay"
  // range in its trace. Under BACKWARD_PRE it first waits until every other rank has finished that unit's
  // backward compute, so the others' wait for its prefetch is exposed by construction, whatever the load.
  int slow_rank = -1;
  int backward_delay_ms = 0;
};

}  // namespace shardscope::train
