#include "tracer/format/run_shape.h"

#include <algorithm>
#include <cmath>

#include "tracer/format/json_get.h"
#include "tracer/format/keys.h"

namespace shardscope::trace {
namespace {

using nlohmann::json;

// A count of ranks: within 1 to 1e7, else 0 (not said). Range-checked as a double before the cast.
int rank_count(const json& o, const char* key) {
  std::optional<double> v = json_number(o, key);
  return v && *v >= 1 && *v <= 1e7 ? int(*v) : 0;
}

// A unit's id: a whole number within int64, else -1.
int64_t unit_id(const json& u) {
  std::optional<double> v = json_number(u, keys::kCfgUnitId);
  if (!v || *v != std::floor(*v) || !(*v >= -9.2e18 && *v <= 9.2e18)) return -1;
  return int64_t(*v);
}

int all_gather_limit(const json& cfg) {
  const json* v = json_field(cfg, keys::kCfgLimitAllGathers);
  if (!v) return 0;
  // Clamped before the cast: a double past int's range does not convert.
  if (v->is_number() && v->get<double>() >= 1) return int(std::min(v->get<double>(), 1e6));
  if (v->is_boolean() && v->get<bool>()) return kFsdp1AllGatherLimit;
  return 0;
}

// The trainer's counts are integers: written as such, so that its run_config reads as it always has.
json count(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9e15) return int64_t(v);
  return v;
}

}  // namespace

std::string RunShape::unit_name(int64_t id) const {
  std::string name;
  for (const UnitShape& u : units)
    if (u.id == id && !u.name.empty()) name = u.name;  // the last, as the viewer always took
  return name;
}

RunShape run_shape_from_json(const json& cfg) {
  RunShape s;
  if (!cfg.is_object()) return s;
  s.given = true;
  s.sharding = json_string(cfg, keys::kCfgSharding).value_or("");
  s.backward_prefetch = json_string(cfg, keys::kCfgBackwardPrefetch).value_or("");
  s.forward_prefetch = json_truthy(cfg, keys::kCfgForwardPrefetch);
  s.limit_all_gathers = all_gather_limit(cfg);
  s.param_dtype = json_string(cfg, keys::kCfgParamDtype);
  s.reduce_dtype = json_string(cfg, keys::kCfgReduceDtype);
  s.world_size = rank_count(cfg, keys::kWorldSize);
  s.ranks_per_node = rank_count(cfg, keys::kCfgRanksPerNode);
  s.activation_checkpointing = json_truthy(cfg, keys::kCfgActivationCheckpointing);
  s.cpu_offload = json_truthy(cfg, keys::kCfgCpuOffload);
  s.batch_size = json_number(cfg, keys::kCfgBatchSize);
  if (const json* m = json_field(cfg, keys::kCfgModel))
    s.model = {json_number(*m, keys::kCfgModelLayers), json_number(*m, keys::kCfgModelDim),
               json_number(*m, keys::kCfgModelHeads),  json_number(*m, keys::kCfgModelSeqLen),
               json_number(*m, keys::kCfgModelFfnDim), json_string(*m, keys::kCfgModelAttention)};
  if (const json* units = json_field(cfg, keys::kCfgUnits); units && units->is_array())
    for (const json& u : *units)
      s.units.push_back({unit_id(u), json_string(u, keys::kName).value_or(""), json_number(u, keys::kCfgUnitParams),
                         json_number(u, keys::kCfgUnitPaddedParams)});
  return s;
}

json to_json(const RunShape& s) {
  json j = {{keys::kCfgSharding, s.sharding},
            {keys::kCfgBackwardPrefetch, s.backward_prefetch},
            {keys::kCfgForwardPrefetch, s.forward_prefetch},
            {keys::kCfgLimitAllGathers, s.limit_all_gathers},
            {keys::kWorldSize, s.world_size},
            {keys::kCfgRanksPerNode, s.ranks_per_node},
            {keys::kCfgActivationCheckpointing, s.activation_checkpointing},
            {keys::kCfgCpuOffload, s.cpu_offload},
            {keys::kCfgModel, json::object()},
            {keys::kCfgUnits, json::array()}};
  if (s.param_dtype) j[keys::kCfgParamDtype] = *s.param_dtype;
  if (s.reduce_dtype) j[keys::kCfgReduceDtype] = *s.reduce_dtype;
  if (s.batch_size) j[keys::kCfgBatchSize] = count(*s.batch_size);
  const std::pair<const char*, const std::optional<double>*> dims[] = {{keys::kCfgModelLayers, &s.model.layers},
                                                                       {keys::kCfgModelDim, &s.model.dim},
                                                                       {keys::kCfgModelHeads, &s.model.heads},
                                                                       {keys::kCfgModelSeqLen, &s.model.seq_len},
                                                                       {keys::kCfgModelFfnDim, &s.model.ffn_dim}};
  for (const auto& [key, v] : dims)
    if (*v) j[keys::kCfgModel][key] = count(**v);
  if (s.model.attention) j[keys::kCfgModel][keys::kCfgModelAttention] = *s.model.attention;
  for (const UnitShape& u : s.units) {
    json o = {{keys::kCfgUnitId, u.id}, {keys::kName, u.name}};
    if (u.params) o[keys::kCfgUnitParams] = count(*u.params);
    if (u.padded_params) o[keys::kCfgUnitPaddedParams] = count(*u.padded_params);
    j[keys::kCfgUnits].push_back(std::move(o));
  }
  return j;
}

}  // namespace shardscope::trace
