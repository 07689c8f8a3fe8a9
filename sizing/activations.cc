#include "sizing/activations.h"

#include <vector>

#include <fmt/format.h>

#include "model/json_get.h"
#include "sizing/zero_model.h"
#include "tracer/format/keys.h"

namespace shardscope::sizing {

double layer_activation_bytes_16bit(const ActivationConfig& c) {
  const double s = c.seq_len, b = c.batch, h = c.hidden, a = c.heads;
  return s * b * h * (34 + 5 * a * s / h);
}

std::optional<int64_t> checked_activation_elements(int64_t s, int64_t b, int64_t h, int64_t a, int64_t layers) {
  int64_t sb = 0, linear = 0, quadratic = 0, layer = 0, all = 0;
  if (__builtin_mul_overflow(s, b, &sb) || __builtin_mul_overflow(sb, h, &linear) ||
      __builtin_mul_overflow(linear, 34, &linear) || __builtin_mul_overflow(sb, s, &quadratic) ||
      __builtin_mul_overflow(quadratic, a, &quadratic) || __builtin_mul_overflow(quadratic, 5, &quadratic) ||
      __builtin_add_overflow(linear, quadratic, &layer) || __builtin_mul_overflow(layer, layers, &all))
    return std::nullopt;
  return all;
}

std::optional<int64_t> checked_ffn_activation_elements(int64_t s, int64_t b, int64_t ffn, int64_t layers) {
  int64_t sb = 0, layer = 0, all = 0;
  if (__builtin_mul_overflow(s, b, &sb) || __builtin_mul_overflow(sb, ffn, &layer) ||
      __builtin_mul_overflow(layer, layers, &all))
    return std::nullopt;
  return all;
}

ActivationPrediction predict_activations(const ActivationConfig& c) {
  const double scale = c.bytes_per_element / 2;
  const double layer = layer_activation_bytes_16bit(c);
  const double s = c.seq_len, b = c.batch, h = c.hidden;
  ActivationPrediction p;
  p.inputs = c;
  p.scale = scale;
  p.bytes = c.checkpointing ? scale * (2 * s * b * h * c.layers + layer) : scale * layer * c.layers;
  return p;
}

std::optional<ActivationConfig> activation_config_from_run(const nlohmann::json& rc, MemoryNa& why) {
  if (!rc.is_object()) {
    why = {MemoryNa::Code::NoActivationRunConfig};
    return std::nullopt;
  }
  const nlohmann::json* model = model::json_field(rc, keys::kCfgModel);
  static const nlohmann::json kNone;
  const nlohmann::json& m = model ? *model : kNone;
  ActivationConfig c;
  std::vector<std::string> missing;
  auto need = [&](const nlohmann::json& o, const char* key, const std::string& label, double& into) {
    std::optional<double> v = model::json_number(o, key);
    if (v && *v > 0) into = *v;
    else
      missing.push_back(label);
  };
  need(m, keys::kCfgModelSeqLen, "model.seq_len", c.seq_len);
  need(rc, keys::kCfgBatchSize, "batch_size", c.batch);
  need(m, keys::kCfgModelDim, "model.dim", c.hidden);
  need(m, keys::kCfgModelHeads, "model.heads", c.heads);
  need(m, keys::kCfgModelLayers, "model.layers", c.layers);
  if (!missing.empty()) {
    why = {MemoryNa::Code::NoActivationInputs, fmt::format("{}", fmt::join(missing, ", "))};
    return std::nullopt;
  }
  std::string dtype = model::json_string(rc, keys::kCfgParamDtype).value_or("fp32");
  c.bytes_per_element = dtype == "fp32" || dtype == "float32" || dtype == "float" ? 4 : 2;
  c.checkpointing = model::json_truthy(rc, keys::kCfgActivationCheckpointing);
  return c;
}

}  // namespace shardscope::sizing
