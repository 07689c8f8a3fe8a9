#include "training/app/run_config.h"

#include <algorithm>

#include "sizing/zero_model.h"
#include "tracer/format/keys.h"

namespace shardscope::train {

using json = nlohmann::json;

json run_config(const Args& a, const FsdpOptions& o, const WorldEnv& w, int shard_size) {
  json units = json::array();
  for (const sizing::UnitLayout& u : sizing::unit_layouts(a.model)) {
    int64_t padded = sizing::padded_numel(u.numel, shard_size);
    units.push_back({{keys::kCfgUnitId, u.id},
                     {keys::kName, u.name},
                     {keys::kCfgUnitParams, u.numel},
                     {keys::kCfgUnitPaddedParams, padded}});
  }
  const sizing::ModelConfig& m = a.model;
  json cfg = {{keys::kCfgSharding, sharding_name(o.sharding)},
              {keys::kCfgBackwardPrefetch, prefetch_name(o.backward_prefetch)},
              {keys::kCfgForwardPrefetch, o.forward_prefetch},
              {keys::kCfgLimitAllGathers, o.limit_all_gathers},
              {keys::kCfgParamDtype, dtype_name(o.param_dtype)},
              {keys::kCfgReduceDtype, dtype_name(o.reduce_dtype)},
              {keys::kWorldSize, w.world_size},
              {keys::kCfgRanksPerNode, o.sharding == Sharding::HybridShard ? o.ranks_per_node : w.local_world_size},
              {"shard_size", shard_size},
              {keys::kCfgActivationCheckpointing, o.activation_checkpointing},
              {keys::kCfgCpuOffload, a.cpu_offload},
              {keys::kCfgOptimizer, "adamw"},
              {keys::kCfgBatchSize, a.batch},
              {"device", a.device},
              {keys::kCfgModel,
               {{"preset", m.preset},
                {keys::kCfgModelLayers, m.layers},
                {keys::kCfgModelDim, m.dim},
                {keys::kCfgModelHeads, m.heads},
                {"kv_heads", m.kv_heads},
                {"ffn_dim", m.ffn_dim},
                {"vocab", m.vocab},
                {keys::kCfgModelSeqLen, m.seq_len},
                {"params", sizing::parameter_count(m)}}},
              {keys::kCfgUnits, units}};
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
