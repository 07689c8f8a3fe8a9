#include "analyzer/metrics/memory_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analyzer/metrics/activations.h"
#include "analyzer/model/json_get.h"
#include "tracer/format/keys.h"

namespace shardscope::metrics {

bool apply_dtype(MemoryConfig& c, const std::string& d) {
  if (d == "bf16" || d == "fp16" || d == "bfloat16" || d == "float16" || d == "half") {
    c.param_bytes = 2;
    return true;
  }
  if (d == "fp32" || d == "float32" || d == "float") {
    c.param_bytes = 4;
    return true;
  }
  return false;
}

std::string precision_name(Precision p) { return p == Precision::Fsdp ? "fsdp" : "zero"; }

MemoryPrediction predict(const MemoryConfig& c) {
  MemoryPrediction p;
  const double psi = c.padded_params > 0 ? c.padded_params : c.params, n = std::max(1, c.world), pb = c.param_bytes;
  const double shard = c.stage >= 1 ? psi / n : psi;
  p.master = 4 * shard;
  p.optimizer_state = 8 * shard;
  p.gradients = c.grad_bytes() * (c.stage >= 2 ? psi / n : psi);
  if (c.stage == 0) p.params = pb == 4 ? 0 : pb * psi;  // DDP in fp32: the master is the parameter
  else if (c.stage <= 2) p.params = pb * psi;           // beside the fp32 master shard, whatever the dtype
  else {
    if (c.precision == Precision::Zero && pb != 4) p.params_shard = pb * psi / n;
    p.gathered = pb * (c.largest_unit_params * std::max(1, c.units_in_flight) + c.root_unit_params);
  }
  if (c.offload && c.stage >= 2) {
    p.host_offloaded = p.master + p.params_shard + p.gradients + p.optimizer_state;
    p.master = p.params_shard = p.gradients = p.optimizer_state = 0;
  }
  return p;
}

std::string describe(const MemoryConfig& c) {
  const double psi = c.padded_params > 0 ? c.padded_params : c.params;
  std::string s = fmt::format("ZeRO stage {} over N = {}, Ψ = {:.0f}{}, {}-byte parameters: an fp32 master ({}), {}-byte gradients, AdamW's two fp32 moments",
                              c.stage, c.world, psi, c.padded_params > 0 ? " (units padded to N)" : "", c.param_bytes,
                              c.stage == 0 ? (c.param_bytes == 4 ? "the parameters themselves" : "whole") : "sharded", c.grad_bytes());
  if (c.stage >= 1 && c.stage <= 2) s += fmt::format("; the whole parameters in their dtype beside the master shard");
  if (c.stage == 3) {
    if (c.precision == Precision::Zero && c.param_bytes != 4) s += "; a shard of the parameters in their dtype";
    if (c.largest_unit_params > 0)
      s += fmt::format("; gathered while running: the largest unit ({:.0f} parameters) × {} ({}){}", c.largest_unit_params, std::max(1, c.units_in_flight),
                       c.units_in_flight >= 2 ? "the running unit and the prefetched one" : "no prefetch: the running unit only",
                       c.root_unit_params > 0 ? fmt::format(", and the root unit ({:.0f}), kept gathered", c.root_unit_params) : "");
    else
      s += "; gathered units: unknown (no unit sizes)";
  }
  s += fmt::format(" ({} accounting{})", c.precision == Precision::Fsdp ? "PyTorch FSDP's and shardscope-train's" : "the ZeRO paper's",
                   c.param_bytes == 4 ? "; in fp32 the two agree" : "");
  if (c.offload) s += c.stage >= 2 ? "; the sharded state offloaded to the host" : "; offload changes nothing below stage 2";
  return s;
}

std::string memory_command(const MemoryConfig& c) {
  const double psi = c.padded_params > 0 ? c.padded_params : c.params;
  std::string s = fmt::format("shardscope memory --params {:.0f} --world {} --stage {} --dtype {} --precision {}", psi, c.world, c.stage,
                              c.param_bytes == 4 ? "fp32" : "bf16", precision_name(c.precision));
  if (c.stage == 3 && c.largest_unit_params > 0) s += fmt::format(" --largest-unit {:.0f}", c.largest_unit_params);
  if (c.stage == 3 && c.root_unit_params > 0) s += fmt::format(" --root-unit {:.0f}", c.root_unit_params);
  if (c.stage == 3 && c.units_in_flight < 2) s += " --backward-prefetch none";
  if (c.offload) s += " --offload";
  return s;
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
  // Read as doubles and range-checked before the cast: a double past int's range does not convert.
  auto count = [](std::optional<double> v, int fallback) { return v && *v >= 1 && *v <= 1e7 ? int(*v) : fallback; };
  c.world = count(model::json_number(rc, keys::kWorldSize), world_size);
  if (sharding == "hybrid_shard") c.world = count(model::json_number(rc, keys::kCfgRanksPerNode), c.world);
  if (c.world <= 0) c.world = std::max(1, world_size);
  if (rc.contains(keys::kCfgUnits) && rc[keys::kCfgUnits].is_array()) {
    // A parameter count is finite and below 1e15 (a thousand times the largest models): anything else would
    // print inf and draw NaN-wide bars, so the prediction is n/a with the reason.
    auto plausible = [](double v) { return std::isfinite(v) && v >= 0 && v <= 1e15; };
    size_t i = 0;
    for (const auto& u : rc[keys::kCfgUnits]) {
      double n = model::json_number(u, keys::kCfgUnitParams).value_or(0.0);
      const double claimed_padded = model::json_number(u, keys::kCfgUnitPaddedParams).value_or(n);
      if (!plausible(n) || !plausible(claimed_padded)) {
        why = fmt::format("n/a: run_config.units[{}] gives {} parameters: not a parameter count (0 to 1e15)", i, plausible(n) ? claimed_padded : n);
        return std::nullopt;
      }
      ++i;
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
  c.precision = Precision::Fsdp;  // shardscope-train keeps its states as PyTorch FSDP does
  c.offload = model::json_truthy(rc, keys::kCfgCpuOffload);
  std::string prefetch = model::json_string(rc, keys::kCfgBackwardPrefetch).value_or("none");
  c.units_in_flight = prefetch == "pre" || prefetch == "post" || model::json_truthy(rc, keys::kCfgForwardPrefetch) ? 2 : 1;
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
  std::optional<MemoryPrediction> p;
  if (out.config) {
    p = predict(*out.config);
    out.states_model = describe(*out.config) + "; the same as `" + memory_command(*out.config) + "`";
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
    std::string why_not;  // why there is no prediction
  };
  const std::string no_config = why.empty() ? "n/a" : why;
  const Cat cats[] = {
      {keys::kMemoryShardedParams, p ? std::optional(p->sharded_params()) : std::nullopt, no_config},
      {keys::kMemoryUnshardedParams, p ? std::optional(p->unsharded_params()) : std::nullopt, no_config},
      {keys::kMemoryGradients, p ? std::optional(p->gradients) : std::nullopt, no_config},
      {keys::kMemoryOptimizerState, p ? std::optional(p->optimizer_state) : std::nullopt, no_config},
      {keys::kMemoryHostOffloaded, p && out.config->offload ? std::optional(p->host_offloaded) : std::nullopt,
       p ? "n/a: the run does not offload" : no_config},
      {keys::kMemoryActivations, activations, out.activations_model},
      {keys::kMemoryAllocatorTotal, std::nullopt, "n/a: the model predicts categories, not the allocator's total (which holds them all and more)"},
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
    if (!row.measured) row.measured_na = "n/a: the trace has no memory.* counter for it";
    if (!row.predicted) row.predicted_na = c.why_not.empty() ? "n/a: the model says nothing about it" : c.why_not;
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
