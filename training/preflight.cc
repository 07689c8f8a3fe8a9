#include "training/preflight.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "sizing/activations.h"
#include "sizing/zero_model.h"

namespace shardscope::train {
namespace {

// GB, or TB and PB for the absurd shapes, so a line with four sizes stays short.
std::string gb(double bytes) {
  char buf[48];
  if (bytes < 1e12) std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  else if (bytes < 1e15)
    std::snprintf(buf, sizeof buf, "%.1f TB", bytes / 1e12);
  else
    std::snprintf(buf, sizeof buf, "%.1f PB", bytes / 1e15);
  return buf;
}

// sizing::padded_numel in doubles: a count near INT64_MAX plus the shard count would overflow.
double padded(int64_t numel, int64_t shards) { return std::ceil(double(numel) / double(shards)) * double(shards); }

}  // namespace

void check_run_fits(const RunShape& r, bool host, double available, int ranks_here) {
  const sizing::ModelConfig& m = r.model;
  auto flags = [](std::initializer_list<std::pair<const char*, int64_t>> fs) {
    std::string s;
    for (const auto& [flag, value] : fs) s += (s.empty() ? "" : ", ") + std::string(flag) + " " + std::to_string(value);
    return s;
  };
  const auto counts = sizing::checked_counts(m);
  if (!counts)
    throw std::invalid_argument(
        flags({{"--layers", m.layers}, {"--dim", m.dim}, {"--ffn-dim", m.ffn_dim}, {"--vocab", m.vocab}}) +
        ": the parameter count does not fit in 64 bits; no machine holds this model");
  const auto act = sizing::checked_activation_elements(m.seq_len, r.batch, m.dim, m.heads, m.layers);
  if (!act)
    throw std::invalid_argument(flags({{"--seq-len", m.seq_len},
                                       {"--batch-size", r.batch},
                                       {"--dim", m.dim},
                                       {"--heads", m.heads},
                                       {"--layers", m.layers}}) +
                                ": the activation count does not fit in 64 bits; no machine holds these activations");
  // The FFN's intermediates (batch x seq x ffn_dim a layer; one layer's under checkpointing, which recomputes
  // a block at a time), which the activation formula does not count: an absurd --ffn-dim is otherwise
  // allocated before anything says so.
  const auto ffn =
      sizing::checked_ffn_activation_elements(m.seq_len, r.batch, m.ffn_dim, r.checkpointing ? 1 : m.layers);
  if (!ffn)
    throw std::invalid_argument(
        flags({{"--ffn-dim", m.ffn_dim}, {"--seq-len", m.seq_len}, {"--batch-size", r.batch}, {"--layers", m.layers}}) +
        ": the FFN's activation count does not fit in 64 bits; no machine holds these activations");
  if (!host || available <= 0) return;

  // As sizing::config_from_run reads the trainer's run_config: every block one unit, the root kept gathered.
  sizing::MemoryConfig mc;
  mc.params = double(counts->total);
  mc.padded_params = padded(counts->root, r.shard_size) + double(m.layers) * padded(counts->block, r.shard_size);
  mc.world = int(r.shard_size);
  mc.stage = r.stage;
  if (!sizing::apply_dtype(mc, r.param_dtype)) sizing::apply_dtype(mc, "fp32");
  mc.precision = sizing::Precision::Fsdp;
  mc.offload = r.offload;
  mc.largest_unit_params = padded(counts->block, r.shard_size);
  mc.root_unit_params = padded(counts->root, r.shard_size);
  mc.units_in_flight = sizing::units_in_flight(r.prefetching, r.forward_prefetch);
  const sizing::MemoryPrediction p = sizing::predict(mc);

  sizing::ActivationConfig ac;
  ac.seq_len = double(m.seq_len), ac.batch = double(r.batch), ac.hidden = double(m.dim), ac.heads = double(m.heads);
  ac.layers = double(m.layers);
  ac.bytes_per_element = r.param_dtype == "fp32" ? 4 : 2;
  ac.checkpointing = r.checkpointing;

  const double ffn_bytes = double(*ffn) * ac.bytes_per_element;
  const double states = p.model_states() + p.gathered, activations = sizing::predict_activations(ac).bytes + ffn_bytes;
  const double per_rank = states + activations;
  const int here = ranks_here < 1 ? 1 : ranks_here;
  if (per_rank * here <= available) return;
  // When the FFN's width is what does not fit, the line says so by its flag.
  const bool ffn_most = ffn_bytes > activations / 2;
  const std::string ffn_part =
      ffn_most ? ", of which " + gb(ffn_bytes) + " the FFN's intermediates at --ffn-dim " + std::to_string(m.ffn_dim)
               : "";
  // Within kMaxLineChars (training/app/stop.h) for the sizes shapes give, up to thousands of PB.
  throw std::invalid_argument("this run needs about " + gb(per_rank) + " per rank (model states " + gb(states) +
                              ", activations " + gb(activations) + ffn_part + ") and " + std::to_string(here) +
                              " rank(s) on this machine, but only " + gb(available) + " is free; try " +
                              (ffn_most ? "a smaller --ffn-dim or --batch-size, or --activation-checkpointing"
                                        : "a smaller --preset or --batch-size, more ranks (full_shard divides the "
                                          "states) or --activation-checkpointing"));
}

}  // namespace shardscope::train
