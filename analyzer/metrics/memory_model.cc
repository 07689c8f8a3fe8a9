#include "analyzer/metrics/memory_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analyzer/metrics/activations.h"
#include "model/json_get.h"
#include "tracer/format/keys.h"
#include "tracer/format/run_config.h"

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

std::optional<MemoryConfig> config_from_run(const nlohmann::json& rc, int world_size, MemoryNa& why) {
  if (!rc.is_object()) {
    why = {MemoryNa::Code::NoRunConfig};
    return std::nullopt;
  }
  MemoryConfig c;
  std::string sharding = model::json_string(rc, keys::kCfgSharding).value_or("");
  const std::optional<trace::Sharding> strategy = trace::sharding_from_name(sharding);
  if (strategy) c.stage = trace::zero_stage(*strategy);
  else {
    why = sharding.empty() ? MemoryNa{MemoryNa::Code::NoSharding} : MemoryNa{MemoryNa::Code::UnknownSharding, sharding};
    return std::nullopt;
  }
  // Read as doubles and range-checked before the cast: a double past int's range does not convert.
  auto count = [](std::optional<double> v, int fallback) { return v && *v >= 1 && *v <= 1e7 ? int(*v) : fallback; };
  c.world = count(model::json_number(rc, keys::kWorldSize), world_size);
  if (strategy == trace::Sharding::HybridShard) c.world = count(model::json_number(rc, keys::kCfgRanksPerNode), c.world);
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
        why = {MemoryNa::Code::ImplausibleUnitParams, "", plausible(n) ? claimed_padded : n, i};
        return std::nullopt;
      }
      ++i;
      c.params += n;
      // Units are sharded and gathered padded to a multiple of N.
      const double padded = model::json_number(u, keys::kCfgUnitPaddedParams).value_or(n);
      c.padded_params += padded;
      // FSDP keeps the root unit gathered.
      if (model::json_number(u, keys::kCfgUnitId).value_or(-1) == keys::kRootUnit && rc[keys::kCfgUnits].size() > 1) c.root_unit_params = padded;
      else c.largest_unit_params = std::max(c.largest_unit_params, padded);
    }
  }
  if (c.params <= 0) {
    why = {MemoryNa::Code::NoUnitParams};
    return std::nullopt;
  }
  std::string dtype = model::json_string(rc, keys::kCfgParamDtype).value_or("fp32");
  if (!apply_dtype(c, dtype)) apply_dtype(c, "fp32");
  c.precision = Precision::Fsdp;  // shardscope-train keeps its states as PyTorch FSDP does
  c.offload = model::json_truthy(rc, keys::kCfgCpuOffload);
  const auto prefetch = trace::prefetch_from_name(model::json_string(rc, keys::kCfgBackwardPrefetch).value_or("none"));
  const bool prefetching = prefetch && *prefetch != trace::BackwardPrefetch::None;
  c.units_in_flight = prefetching || model::json_truthy(rc, keys::kCfgForwardPrefetch) ? 2 : 1;
  return c;
}

namespace {

bool any_measured_counter(const model::Rank& rank) {
  for (const char* c : {keys::kMemoryShardedParams, keys::kMemoryUnshardedParams, keys::kMemoryGradients, keys::kMemoryOptimizerState})
    if (rank.counter(c)) return true;
  return false;
}
}  // namespace

RankMemory compare_memory(const model::Rank& rank) {
  using Code = MemoryNa::Code;
  RankMemory out;
  out.rank = rank.rank;
  out.config = config_from_run(rank.run_config, rank.world_size, out.states_na);
  std::optional<MemoryPrediction> p;
  if (out.config) p = predict(*out.config);
  if (auto ac = activation_config_from_run(rank.run_config, out.activations_na)) out.activations = predict_activations(*ac);
  struct Cat {
    const char* counter;
    std::optional<double> predicted;
    MemoryNa why_not;  // why there is no prediction
  };
  const MemoryNa& no_config = out.states_na;
  const Cat cats[] = {
      {keys::kMemoryShardedParams, p ? std::optional(p->sharded_params()) : std::nullopt, no_config},
      {keys::kMemoryUnshardedParams, p ? std::optional(p->unsharded_params()) : std::nullopt, no_config},
      {keys::kMemoryGradients, p ? std::optional(p->gradients) : std::nullopt, no_config},
      {keys::kMemoryOptimizerState, p ? std::optional(p->optimizer_state) : std::nullopt, no_config},
      {keys::kMemoryHostOffloaded, p && out.config->offload ? std::optional(p->host_offloaded) : std::nullopt, p ? MemoryNa{Code::NoOffload} : no_config},
      {keys::kMemoryActivations, out.activations ? std::optional(out.activations->bytes) : std::nullopt, out.activations_na},
      {keys::kMemoryAllocatorTotal, std::nullopt, {Code::AllocatorTotal}},
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
    if (!row.measured) row.measured_na = {Code::NoCounter};
    if (!row.predicted) row.predicted_na = c.why_not ? c.why_not : MemoryNa{Code::ModelSilent};
    if (row.measured && row.predicted) {
      double diff = *row.measured - *row.predicted;
      double rel = std::fabs(diff) / std::max(*row.predicted, 1.0);
      if (rel > worst) {
        worst = rel;
        out.departs_most = out.rows.size();
      }
    }
    out.rows.push_back(row);
  }
  out.all_agree = worst >= 0 && worst < kMemoryAgreement;
  out.no_counters = !any_measured;
  return out;
}

}  // namespace shardscope::metrics
