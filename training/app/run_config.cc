#include "training/app/run_config.h"

#include <algorithm>

#include "sizing/zero_model.h"
#include "tracer/format/keys.h"
#include "tracer/format/run_shape.h"

namespace shardscope::train {

using json = nlohmann::json;

json run_config(const Args& a, const FsdpOptions& o, const WorldEnv& w, int shard_size) {
  const sizing::ModelConfig& m = a.model;
  shardscope::trace::RunShape shape{
      .given = true,
      .sharding = sharding_name(o.sharding),
      .backward_prefetch = prefetch_name(o.backward_prefetch),
      .forward_prefetch = o.forward_prefetch,
      .limit_all_gathers = o.limit_all_gathers,
      .param_dtype = dtype_name(o.param_dtype),
      .reduce_dtype = dtype_name(o.reduce_dtype),
      .world_size = w.world_size,
      .ranks_per_node = o.sharding == Sharding::HybridShard ? o.ranks_per_node : w.local_world_size,
      .activation_checkpointing = o.activation_checkpointing,
      .cpu_offload = a.cpu_offload,
      .batch_size = double(a.batch),
      .model = {double(m.layers), double(m.dim), double(m.heads), double(m.seq_len)}};
  for (const sizing::UnitLayout& u : sizing::unit_layouts(a.model))
    shape.units.push_back({u.id, u.name, double(u.numel), double(sizing::padded_numel(u.numel, shard_size))});
  // The shape the analysis parses back (tracer/format/run_shape.h), then what only the trainer knows.
  json cfg = shardscope::trace::to_json(shape);
  cfg["shard_size"] = shard_size;
  cfg[keys::kCfgOptimizer] = "adamw";
  cfg["device"] = a.device;
  json& model = cfg[keys::kCfgModel];
  model["preset"] = m.preset;
  model["kv_heads"] = m.kv_heads;
  model["ffn_dim"] = m.ffn_dim;
  model["vocab"] = m.vocab;
  model["params"] = sizing::parameter_count(m);
  model[keys::kCfgModelAttention] = o.sdpa ? "sdpa" : "eager";
  // The same on every rank, so that the ranks' headers agree.
  if (a.slow_rank >= 0)
    cfg[keys::kCfgPlantedDelay] = {{keys::kRank, a.slow_rank}, {keys::kCfgPlantedDelayMs, a.slow_rank_ms}};
  return cfg;
}

CheckpointConfig checkpoint_config(const Args& a, const json& config) {
  CheckpointConfig c;
  c.config = config;
  c.config.erase(keys::kCfgBackwardPrefetch);  // the schedule, not the state: a resume may change it
  c.config.erase(keys::kCfgForwardPrefetch);
  c.config.erase(keys::kCfgLimitAllGathers);
  c.warmup = a.warmup >= 0 ? a.warmup : std::max(1, a.steps / 10);
  c.run = {{"steps", a.steps}, {"lr", a.lr}, {"seed", a.seed}, {"warmup", c.warmup}, {"max_grad_norm", a.max_grad_norm},
           {"data", a.data}};
  return c;
}

}  // namespace shardscope::train
