// Sharded AdamW: each rank updates only the fp32 master shard it owns, with its own moments; no
// communication beyond FSDP's own. Learning rate: linear warmup, then cosine decay to min_lr_ratio * lr.
#pragma once

#include "training/fsdp/unit.h"

namespace shardscope::train {

struct AdamWConfig {
  double lr = 3e-3;
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
  int warmup_steps = 10;
  int total_steps = 100;
  double min_lr_ratio = 0.1;
};

// Learning rate for 0-based step `step`.
double learning_rate(const AdamWConfig& c, int step);
// One update of a unit's shard; `t` is the 1-based update count (bias correction).
void adamw_update(Unit& u, double lr, int t, const AdamWConfig& c);
// One update of every unit's shard: where the shards are CUDA fp32 and libtorch has it (2.1 and later), one
// fused multi-tensor kernel (at::_fused_adamw_, what torch.optim.AdamW(fused=True) runs) in place of seven
// passes a unit; else adamw_update for each.
void adamw_update_all(const std::vector<std::unique_ptr<Unit>>& units, double lr, int t, const AdamWConfig& c);

}  // namespace shardscope::train
