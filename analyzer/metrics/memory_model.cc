#include "analyzer/metrics/memory_model.h"

#include <cmath>

#include <fmt/format.h>

#include "analyzer/metrics/activations.h"
#include "analyzer/model/json_get.h"
#include "tracer/format/keys.h"

namespace shardscope::metrics {

bool apply_dtype(MemoryConfig& c, const std::string& d) {
  if (d == "bf16" || d == "fp16" || d == "bfloat16" || d == "float16" || d == "half") {
    c.param_bytes = 2, c.grad_bytes = 2, c.optimizer_bytes = 12;
    return true;
  }
  if (d == "fp32" || d == "float32" || d == "float") {
    c.param_bytes = 4, c.grad_bytes = 4, c.optimizer_bytes = 8;
    return true;
  }
  return false;
}

MemoryPrediction predict(const MemoryConfig& c) {
  MemoryPrediction p;
  const double psi = c.params, n = std::max(1, c.world);
  p.params = c.param_bytes * psi / (c.stage >= 3 ? n : 1);
  p.gradients = c.grad_bytes * psi / (c.stage >= 2 ? n : 1);
  p.optimizer_state = c.optimizer_bytes * psi / (c.stage >= 1 ? n : 1);
  if (c.stage >= 3) p.unsharded_params = c.param_bytes * (c.largest_unit_params * std::max(1, c.units_in_flight) + c.root_unit_params);
  if (c.offload) {
    // The sharded part of the state moves to the host: the optimizer state always, and under stage 2/3
    // the sharded gradients and (stage 3) parameters.
    p.host_offloaded = p.optimizer_state;
    p.optimizer_state = 0;
    if (c.stage >= 2) p.host_offloaded += p.gradients, p.gradients = 0;
    if (c.stage >= 3) p.host_offloaded += p.params, p.params = 0;
  }
  return p;
}

CounterPrediction predict_counters(const MemoryConfig& c) {
  CounterPrediction p;
  const double psi = c.padded_params > 0 ? c.padded_params : c.params, n = std::max(1, c.world), pb = c.param_bytes;
  const double shard = c.stage >= 1 ? psi / n : psi;
  p.sharded_params = 4 * shard;
  p.optimizer_state = 8 * shard;
  p.gradients = 4 * (c.stage >= 2 ? psi / n : psi);
  if (c.stage == 0) p.unsharded_params = pb == 4 ? 0 : pb * psi;  // DDP in fp32: the master is the parameter
  else if (c.stage <= 2) p.unsharded_params = pb * psi;
  else p.unsharded_params = pb * (c.largest_unit_params * std::max(1, c.units_in_flight) + c.root_unit_params);
  if (c.offload && c.stage >= 2) {
    p.host_offloaded = p.sharded_params + p.gradients + p.optimizer_state;
    p.sharded_params = p.gradients = p.optimizer_state = 0;
  }
  return p;
}

std::optional<MemoryConfig> config_from_run(const nlohmann::json& rc, int world_size, std::string& why) {
  if (!rc.is_object()) {
    why = "n/a: the trace has no run_config (give --params/--world/--stage to `shardscope memory`)";
    return std::nullopt;
  }
  MemoryConfig c;
  std::string sharding = model::json_string(rc, keys::kCfgSharding).value_or("");
  if (sharding == "no_shard") c.stage = 0;
  else if (sharding == "zero1") c.stage = 1;
  else if (sharding == "shard_grad_op") c.stage = 2;
  else if (sharding == "full_shard" || sharding == "hybrid_shard") c.stage = 3;
  else {
    why = sharding.empty() ? "n/a: run_config does not say the sharding strategy" : "n/a: unknown sharding strategy \"" + sharding + "\"";
    return std::nullopt;
  }
  c.world = int(model::json_number(rc, keys::kWorldSize).value_or(world_size));
  if (sharding == "hybrid_shard") c.world = int(model::json_number(rc, keys::kCfgRanksPerNode).value_or(c.world));
  if (c.world <= 0) c.world = std::max(1, world_size);
  if (rc.contains(keys::kCfgUnits) && rc[keys::kCfgUnits].is_array()) {
    for (const auto& u : rc[keys::kCfgUnits]) {
      double n = model::json_number(u, keys::kCfgUnitParams).value_or(0.0);
      c.params += n;
      // Units are sharded and gathered padded to a multiple of N.
      const double padded = model::json_number(u, keys::kCfgUnitPaddedParams).value_or(n);
      c.padded_params += padded;
      // The trainer's unit 0 is the root (embedding, final norm, head): FSDP keeps it gathered.
      if (model::json_number(u, keys::kCfgUnitId).value_or(-1) == 0 && rc[keys::kCfgUnits].size() > 1) c.root_unit_params = padded;
      else c.largest_unit_params = std::max(c.largest_unit_params, padded);
    }
  }
  if (c.params <= 0) {
    why = "n/a: run_config lists no units with parameter counts";
    return std::nullopt;
  }
  std::string dtype = model::json_string(rc, keys::kCfgParamDtype).value_or("fp32");
  if (!apply_dtype(c, dtype)) apply_dtype(c, "fp32");
  c.offload = model::json_truthy(rc, keys::kCfgCpuOffload);
  std::string prefetch = model::json_string(rc, keys::kCfgBackwardPrefetch).value_or("none");
  if (prefetch == "pre" || prefetch == "post" || model::json_truthy(rc, keys::kCfgForwardPrefetch)) c.units_in_flight = 2;
  return c;
}

namespace {
constexpr double kAgreement = 0.05;

bool any_measured_counter(const model::Rank& rank) {
  for (const char* c : {keys::kMemoryShardedParams, keys::kMemoryUnshardedParams, keys::kMemoryGradients, keys::kMemoryOptimizerState})
    if (rank.counter(c)) return true;
  return false;
}
}  // namespace

RankMemory compare_memory(const model::Rank& rank) {
  RankMemory out;
  out.rank = rank.rank;
  std::string why;
  out.config = config_from_run(rank.run_config, rank.world_size, why);
  std::optional<CounterPrediction> p;
  if (out.config) {
    p = predict_counters(*out.config);
    const MemoryConfig& c = *out.config;
    out.states_model = fmt::format(
        "ZeRO stage {} over N = {}, Ψ = {:.0f} (units padded to N); as the trainer keeps them: fp32 master shard beside {:.0f}-byte "
        "parameters, fp32 gradients, AdamW moments (8 bytes){}",
        c.stage, c.world, c.padded_params > 0 ? c.padded_params : c.params, c.param_bytes,
        c.offload ? "; sharded state offloaded to the host" : "");
  }
  std::optional<double> activations;
  if (auto ac = activation_config_from_run(rank.run_config, out.activations_model)) {
    ActivationPrediction a = predict_activations(*ac);
    activations = a.bytes;
    out.activations_model = a.how;
  }
  struct Cat {
    const char* counter;
    std::optional<double> predicted;
  };
  const Cat cats[] = {
      {keys::kMemoryShardedParams, p ? std::optional(p->sharded_params) : std::nullopt},
      {keys::kMemoryUnshardedParams, p ? std::optional(p->unsharded_params) : std::nullopt},
      {keys::kMemoryGradients, p ? std::optional(p->gradients) : std::nullopt},
      {keys::kMemoryOptimizerState, p ? std::optional(p->optimizer_state) : std::nullopt},
      {keys::kMemoryHostOffloaded, p && out.config->offload ? std::optional(p->host_offloaded) : std::nullopt},
      {keys::kMemoryActivations, activations},
      {keys::kMemoryAllocatorTotal, std::nullopt},
  };
  bool any_measured = false;
  double worst = -1;
  for (const Cat& c : cats) {
    MemoryRow row;
    row.category = std::string(c.counter).substr(7);  // without "memory."
    if (const model::CounterSeries* s = rank.counter(c.counter)) row.measured = s->peak(), any_measured = true;
    row.predicted = c.predicted;
    if (!row.measured && !row.predicted && c.counter == keys::kMemoryHostOffloaded) continue;  // no offload
    // A counter that never left zero is never written: with a prediction beside it, it measured zero.
    if (!row.measured && row.predicted && any_measured_counter(rank)) row.measured = 0.0;
    if (row.measured && row.predicted) {
      double diff = *row.measured - *row.predicted;
      double rel = std::fabs(diff) / std::max(*row.predicted, 1.0);
      if (rel > worst) {
        worst = rel;
        std::string by = *row.predicted > 0 ? fmt::format("{:+.1f}%", 100 * diff / *row.predicted) : "the model predicts none";
        out.departs_most = fmt::format("{}: measured {:.3f} MB vs predicted {:.3f} MB ({})", row.category, *row.measured / 1e6,
                                       *row.predicted / 1e6, by);
      }
    }
    out.rows.push_back(row);
  }
  // Within 5 % is agreement: name a category only when one really departs.
  if (worst >= 0 && worst < kAgreement)
    out.departs_most = fmt::format("none: every predicted category is within {:.0f}% of the model", 100 * kAgreement);
  if (!any_measured && !p && !activations) out.not_applicable = why + "; and no memory.* counters in the trace";
  else if (!any_measured) out.not_applicable = "n/a: no memory.* counters in the trace (prediction only)";
  else if (!p) out.not_applicable = why;
  return out;
}

}  // namespace shardscope::metrics
