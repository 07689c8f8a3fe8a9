#include "sizing/zero_model.h"

#include <algorithm>
#include <cmath>

#include "tracer/format/keys.h"
#include "tracer/format/run_config.h"

namespace shardscope::sizing {

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
  else if (c.stage <= 2)
    p.params = pb * psi;  // beside the fp32 master shard, whatever the dtype
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

std::optional<MemoryConfig> config_from_run(const trace::RunShape& rc, int world_size, MemoryNa& why) {
  if (!rc.given) {
    why = {MemoryNa::Code::NoRunConfig};
    return std::nullopt;
  }
  MemoryConfig c;
  const std::optional<trace::Sharding> strategy = rc.strategy();
  if (strategy) c.stage = trace::zero_stage(*strategy);
  else {
    why = rc.sharding.empty() ? MemoryNa{MemoryNa::Code::NoSharding}
                              : MemoryNa{MemoryNa::Code::UnknownSharding, rc.sharding};
    return std::nullopt;
  }
  c.world = rc.world_size > 0 ? rc.world_size : world_size;
  if (strategy == trace::Sharding::HybridShard && rc.ranks_per_node > 0) c.world = rc.ranks_per_node;
  if (c.world <= 0) c.world = std::max(1, world_size);
  // A parameter count is finite and below 1e15 (a thousand times the largest models): anything else would
  // print inf and draw NaN-wide bars, so the prediction is n/a with the reason.
  auto plausible = [](double v) { return std::isfinite(v) && v >= 0 && v <= 1e15; };
  for (size_t i = 0; i < rc.units.size(); ++i) {
    const trace::UnitShape& u = rc.units[i];
    const double n = u.params.value_or(0.0);
    // Units are sharded and gathered padded to a multiple of N.
    const double padded = u.padded_params.value_or(n);
    if (!plausible(n) || !plausible(padded)) {
      why = {MemoryNa::Code::ImplausibleUnitParams, "", plausible(n) ? padded : n, i};
      return std::nullopt;
    }
    c.params += n;
    c.padded_params += padded;
    // FSDP keeps the root unit gathered.
    if (u.id == keys::kRootUnit && rc.units.size() > 1) c.root_unit_params = padded;
    else
      c.largest_unit_params = std::max(c.largest_unit_params, padded);
  }
  if (c.params <= 0) {
    why = {MemoryNa::Code::NoUnitParams};
    return std::nullopt;
  }
  if (!apply_dtype(c, rc.param_dtype.value_or("fp32"))) apply_dtype(c, "fp32");
  c.precision = Precision::Fsdp;  // shardscope-train keeps its states as PyTorch FSDP does
  c.offload = rc.cpu_offload;
  const std::optional<trace::BackwardPrefetch> prefetch = rc.prefetch();
  c.units_in_flight = units_in_flight(prefetch && *prefetch != trace::BackwardPrefetch::None, rc.forward_prefetch);
  return c;
}

}  // namespace shardscope::sizing
