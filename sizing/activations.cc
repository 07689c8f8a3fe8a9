#include "sizing/activations.h"

#include <vector>

#include <fmt/format.h>

#include "sizing/zero_model.h"
#include "tracer/format/keys.h"

namespace shardscope::sizing {

double layer_activation_bytes_16bit(const ActivationConfig& c) {
  const double s = c.seq_len, b = c.batch, h = c.hidden, a = c.heads;
  return s * b * h * (34 + (c.scores_kept ? 5 * a * s / h : 0));
}

double trainer_block_layer_bytes(const ActivationConfig& c) {
  const double e = c.bytes_per_element, S = c.seq_len * c.batch * c.hidden, F = c.seq_len * c.batch * c.ffn_dim;
  const double A = c.scores_kept ? c.heads * c.seq_len * c.seq_len * c.batch : 0;
  const bool narrow = e < 4;  // bf16/fp16: RMSNorm and the softmax run in fp32 beside the dtype's copies
  return e * (10 * S + 4 * F) + 4 * A + (narrow ? 8 * S + e * A : 0);
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
  const double layer = c.ffn_dim > 0 ? trainer_block_layer_bytes(c) : scale * layer_activation_bytes_16bit(c);
  const double s = c.seq_len, b = c.batch, h = c.hidden;
  ActivationPrediction p;
  p.inputs = c;
  p.scale = scale;
  // Checkpointing keeps each layer's input (2·s·b·h bytes at 2 bytes an element) and one layer recomputed.
  p.bytes = c.checkpointing ? scale * 2 * s * b * h * c.layers + layer : layer * c.layers;
  return p;
}

std::optional<ActivationConfig> activation_config_from_run(const trace::RunShape& rc, MemoryNa& why) {
  if (!rc.given) {
    why = {MemoryNa::Code::NoActivationRunConfig};
    return std::nullopt;
  }
  ActivationConfig c;
  std::vector<std::string> missing;
  auto need = [&](const std::optional<double>& v, const std::string& label, double& into) {
    if (v && *v > 0) into = *v;
    else
      missing.push_back(label);
  };
  need(rc.model.seq_len, "model.seq_len", c.seq_len);
  need(rc.batch_size, "batch_size", c.batch);
  need(rc.model.dim, "model.dim", c.hidden);
  need(rc.model.heads, "model.heads", c.heads);
  need(rc.model.layers, "model.layers", c.layers);
  if (!missing.empty()) {
    why = {MemoryNa::Code::NoActivationInputs, fmt::format("{}", fmt::join(missing, ", "))};
    return std::nullopt;
  }
  const std::string dtype = rc.param_dtype.value_or("fp32");
  c.bytes_per_element = dtype == "fp32" || dtype == "float32" || dtype == "float" ? 4 : 2;
  c.checkpointing = rc.activation_checkpointing;
  c.scores_kept = rc.model.attention.value_or("eager") != "sdpa";  // SDPA keeps no s² scores for backward
  if (rc.model.ffn_dim && *rc.model.ffn_dim > 0) c.ffn_dim = *rc.model.ffn_dim;  // the trainer's own block
  return c;
}

}  // namespace shardscope::sizing
