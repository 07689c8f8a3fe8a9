#include "analyzer/report/memory_render.h"

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/report/cells.h"

namespace shardscope::report {

using sizing::MemoryConfig;
using sizing::Precision;

std::string describe(const MemoryConfig& c) {
  const double psi = c.padded_params > 0 ? c.padded_params : c.params;
  std::string s = fmt::format(
      "ZeRO stage {} over N = {}, Ψ = {:.0f}{}, {}-byte parameters: an fp32 master ({}), {}-byte gradients, AdamW's "
      "two fp32 moments",
      c.stage, c.world, psi, c.padded_params > 0 ? " (units padded to N)" : "", c.param_bytes,
      c.stage == 0 ? (c.param_bytes == 4 ? "the parameters themselves" : "whole") : "sharded", c.grad_bytes());
  if (c.stage >= 1 && c.stage <= 2) s += fmt::format("; the whole parameters in their dtype beside the master shard");
  if (c.stage == 3) {
    if (c.precision == Precision::Zero && c.param_bytes != 4) s += "; a shard of the parameters in their dtype";
    if (c.largest_unit_params > 0)
      s += fmt::format(
          "; gathered while running: the largest unit ({:.0f} parameters) × {} ({}){}", c.largest_unit_params,
          std::max(1, c.units_in_flight),
          c.units_in_flight >= 2 ? "the running unit and the prefetched one" : "no prefetch: the running unit only",
          c.root_unit_params > 0 ? fmt::format(", and the root unit ({:.0f}), kept gathered", c.root_unit_params) : "");
    else
      s += "; gathered units: unknown (no unit sizes)";
  }
  s += fmt::format(" ({} accounting{})",
                   c.precision == Precision::Fsdp ? "PyTorch FSDP's and shardscope-train's" : "the ZeRO paper's",
                   c.param_bytes == 4 ? "; in fp32 the two agree" : "");
  if (c.offload)
    s += c.stage >= 2 ? "; the sharded state offloaded to the host" : "; offload changes nothing below stage 2";
  return s;
}

std::string memory_command(const MemoryConfig& c) {
  const double psi = c.padded_params > 0 ? c.padded_params : c.params;
  std::string s =
      fmt::format("shardscope memory --params {:.0f} --world {} --stage {} --dtype {} --precision {}", psi, c.world,
                  c.stage, c.param_bytes == 4 ? "fp32" : "bf16", sizing::precision_name(c.precision));
  if (c.stage == 3 && c.largest_unit_params > 0) s += fmt::format(" --largest-unit {:.0f}", c.largest_unit_params);
  if (c.stage == 3 && c.root_unit_params > 0) s += fmt::format(" --root-unit {:.0f}", c.root_unit_params);
  if (c.stage == 3 && c.units_in_flight < 2) s += " --backward-prefetch none";
  if (c.offload) s += " --offload";
  return s;
}

std::string na_text(const sizing::MemoryNa& why) {
  using Code = sizing::MemoryNa::Code;
  switch (why.code) {
    case Code::None: return "";
    case Code::NoRunConfig:
      return "n/a: the trace has no run_config (give --params/--world/--stage to `shardscope memory`)";
    case Code::NoSharding: return "n/a: run_config does not say the sharding strategy";
    case Code::UnknownSharding: return "n/a: unknown sharding strategy \"" + why.text + "\"";
    case Code::ImplausibleUnitParams:
      return fmt::format("n/a: run_config.units[{}] gives {} parameters: not a parameter count (0 to 1e15)", why.index,
                         why.value);
    case Code::NoUnitParams: return "n/a: run_config lists no units with parameter counts";
    case Code::NoActivationRunConfig: return "n/a: the trace has no run_config";
    case Code::NoActivationInputs:
      return fmt::format("n/a: run_config lacks {} (needed to predict activations)", why.text);
    case Code::NoCounter: return "n/a: the trace has no memory.* counter for it";
    case Code::ModelSilent: return "n/a: the model says nothing about it";
    case Code::NoOffload: return "n/a: the run does not offload";
    case Code::AllocatorTotal:
      return "n/a: the model predicts categories, not the allocator's total (which holds them all and more)";
    case Code::NoInferredInput: {
      std::string flag = why.text;
      std::replace(flag.begin(), flag.end(), '_', '-');
      return fmt::format("n/a: the trace has no run_config and does not show the {} (give --{} to `shardscope report`)",
                         why.text == "params"       ? "parameter count"
                         : why.text == "world_size" ? "world size"
                         : why.text == "sharding"   ? "sharding strategy"
                                                    : why.text,
                         flag);
    }
    case Code::OptimizerNotModelled:
      return why.text.empty() ? "n/a: the trace names no optimizer (the model counts AdamW's; give --optimizer adamw)"
                              : "n/a: the model counts AdamW's two fp32 moments, not " + why.text + "'s";
    case Code::Rest:
      if (why.text == metrics::kMemoryCachedFree)
        return "n/a: not a category: the blocks the caching allocator holds free at the fullest moment, its reserved "
               "total less its allocated one (the allocator's events)";
      if (why.text == metrics::kMemoryOtherAllocated)
        return "n/a: not a category: the allocator total's bytes no category counts, less the cached free blocks "
               "and the outside_allocator row where it is shown (tensors no category counts, rounding; without "
               "that row also the CUDA context, NCCL's and cuBLAS's buffers, any other process on the same GPU)";
      if (why.text == metrics::kMemoryAllocatorReservedRow)
        return "n/a: not a category: PyTorch's caching allocator's reserved bytes at the fullest moment (the "
               "cudaMallocs libc10_cuda asked for, as the injection library records them), less what the categories "
               "count";
      if (why.text == metrics::kMemoryOutsideAllocator)
        return "n/a: not a category: the device's used memory less the caching allocator's reserved total (the "
               "CUDA context, NCCL's buffers, other libraries' and other processes' memory on the same GPU)";
      return "n/a: not a category: the allocator total's bytes no category counts (on a GPU the caching allocator's "
             "free cached blocks and rounding, the CUDA context, NCCL's and cuBLAS's buffers, any other process on "
             "the same GPU; on the host the heap's other allocations; the trace has no reserved or allocated counter "
             "to split it by)";
  }
  return "";
}

std::string_view origin_name(metrics::InputOrigin o) {
  using O = metrics::InputOrigin;
  switch (o) {
    case O::None: return "unknown";
    case O::RunConfig: return "run_config";
    case O::Inferred: return "inferred";
    case O::Given: return "given";
  }
  return "unknown";
}

std::string infer_na_text(metrics::InferNa na, const std::string& text) {
  using N = metrics::InferNa;
  switch (na) {
    case N::None: return "";
    case N::NoWorldSize: return "neither the trace's header nor any collective's group size says the world size";
    case N::NoCollectives: return "no all-gather and no all-reduce in the trace";
    case N::NoUnits: return "the all-gathers name no FSDP unit, so forward and backward gathers cannot be told apart";
    case N::NoMessageSizes: return "the collectives carry no sizes (In/Out msg nelems)";
    case N::NoSteps: return "the collectives fall in no step";
    case N::NoStrategy: return "the sharding strategy is unknown";
    case N::NoDtype: return "no collective names its dtype";
    case N::MixedDtypes: return "the collectives name several dtypes (" + text + ")";
    case N::UnknownDtype: return "the collectives' dtype " + text + " is not fp32, bf16 or fp16";
    case N::NoOptimizerRange: return "no Optimizer.step#... range";
  }
  return "";
}

std::string input_value(const metrics::MemoryInput& in, std::string_view name) {
  if (!in.known()) return "";
  if (name == "world_size" || name == "params") return fmt::format("{:.0f}", in.value);
  return in.text;
}

std::string basis_text(const metrics::MemoryInput& in, const metrics::MemoryInputs& all) {
  using B = metrics::InputBasis;
  switch (in.basis) {
    case B::None: return "";
    case B::TraceHeader: return "the trace header's world size (Kineto: distributedInfo.world_size)";
    case B::GroupSize: return "the largest collective group";
    case B::GatheredTwice:
      return fmt::format("units all-gathered in forward and again in backward in step {} ({} all-gathers)", in.step,
                         in.events);
    case B::GatheredOnce:
      return fmt::format("each unit all-gathered once in step {}, in forward only ({} all-gathers)", in.step,
                         in.events);
    case B::AllReduceOnly:
      return fmt::format("all-reduces and no all-gather ({} all-reduce{})", in.events, in.events == 1 ? "" : "s");
    case B::TwoGroupSizes:
      return fmt::format(
          "all-gathers over groups of {} ranks beside all-reduces across them ({} all-gathers in step {})",
          all.group_size, in.events, in.step);
    case B::GatherOutputs:
      return fmt::format(
          "the all-gather outputs of step {}, each of its {} units once ({} all-gathers; FSDP pads each unit to a "
          "multiple of the ranks it is sharded over)",
          in.step, all.units, in.events);
    case B::AllReduceElements:
      return fmt::format("the elements all-reduced in step {} ({} all-reduces): DDP reduces each gradient once a step",
                         in.step, in.events);
    case B::CollectiveDtype: return fmt::format("the dtype the collectives name ({} ops)", in.events);
    case B::OptimizerRange: return fmt::format("the Optimizer.step#{}.step range ({} of them)", in.text, in.events);
  }
  return "";
}

std::string input_text(const metrics::MemoryInput& in, std::string_view name, const metrics::MemoryInputs& all) {
  const std::string label = name == "world_size" ? "world size" : std::string(name);
  if (!in.known()) return fmt::format("{} n/a: {}", label, infer_na_text(in.na, in.text));
  const std::string v = input_value(in, name);
  if (in.origin == metrics::InputOrigin::Inferred)
    return fmt::format("{} {} (inferred from {})", label, v, basis_text(in, all));
  return fmt::format("{} {} ({})", label, v, origin_name(in.origin));
}

std::string inputs_line(const metrics::RankMemory& m) {
  const metrics::MemoryInputs& in = m.inputs;
  if (!in.inferred_or_given()) return "";
  std::string s;
  const std::pair<const metrics::MemoryInput*, std::string_view> all[] = {{&in.world_size, "world_size"},
                                                                          {&in.sharding, "sharding"},
                                                                          {&in.params, "params"},
                                                                          {&in.dtype, "dtype"},
                                                                          {&in.optimizer, "optimizer"}};
  for (const auto& [input, name] : all) s += (s.empty() ? "" : "; ") + input_text(*input, name, in);
  return s;
}

// shardscope-train's block (sizing::trainer_block_layer_bytes), with what it assumes.
std::string trainer_block_how(const sizing::ActivationConfig& c) {
  const std::string inputs = fmt::format("s={:g} b={:g} h={:g} a={:g} L={:g} ffn={:g}", c.seq_len, c.batch, c.hidden,
                                         c.heads, c.layers, c.ffn_dim);
  const double e = c.bytes_per_element;
  // The scores' terms only where they are kept (eager attention; SDPA keeps none).
  const std::string layer =
      fmt::format("{:g}·(10·s·b·h + 4·s·b·ffn){}{}", e, c.scores_kept ? " + 4·a·s²·b" : "",
                  e < 4 ? fmt::format(" + 8·s·b·h{}", c.scores_kept ? fmt::format(" + {:g}·a·s²·b", e) : "") : "");
  const std::string assumes =
      fmt::format("assumes RMSNorm, {}, SwiGLU, no dropout, {:g}-byte activations",
                  c.scores_kept ? "eager attention with the a·s²·b scores kept (softmax in fp32)"
                                : "fused attention (scaled_dot_product_attention: no s² scores kept)",
                  e);
  if (c.checkpointing)
    return fmt::format(
        "predicted for shardscope-train's block with full activation checkpointing: each layer's input, {:g}·s·b·h, "
        "× L + one layer recomputed, {} bytes; {}; {}",
        e, layer, inputs, assumes);
  return fmt::format("predicted for shardscope-train's block without recomputation: {} bytes per layer × L; {}; {}",
                     layer, inputs, assumes);
}

std::string activations_how(const sizing::ActivationPrediction& p) {
  const sizing::ActivationConfig& c = p.inputs;
  if (c.ffn_dim > 0) return trainer_block_how(c);
  const std::string inputs =
      fmt::format("s={:g} b={:g} h={:g} a={:g} L={:g}", c.seq_len, c.batch, c.hidden, c.heads, c.layers);
  // What it assumes about attention, said whatever the dtype.
  const std::string dtype =
      (p.scale == 1 ? std::string("2-byte activations, as the formula counts")
                    : fmt::format("scaled x{:g} for {:g}-byte activations (the formula counts 2-byte ones)", p.scale,
                                  c.bytes_per_element)) +
      (c.scores_kept ? "; assumes eager attention keeping the a·s²·b scores (the 5·a·s/h "
                       "term) and dropout, as the paper's GPT layer"
                     : "; assumes fused attention (no s² scores kept) and dropout");
  if (c.checkpointing)
    return fmt::format(
        "predicted by Korthikanti et al. 2022 with full activation checkpointing: 2·s·b·h per layer (its input) × L + "
        "one layer's "
        "s·b·h·(34 + 5·a·s/h); {}; {}",
        inputs, dtype);
  return fmt::format(
      "predicted by Korthikanti et al. 2022 without recomputation: s·b·h·(34 + 5·a·s/h) per layer × L; {}; {}", inputs,
      dtype);
}

std::string activations_model(const metrics::RankMemory& m) {
  return m.activations ? activations_how(*m.activations) : na_text(m.activations_na);
}

std::string activations_vs_measured(const metrics::RankMemory& m) {
  const std::optional<metrics::ActivationCheck> c = metrics::check_activations(m);
  if (!c) return "";
  const double pct = 100 * metrics::kActivationAgreement;
  const std::string head = fmt::format("measured {} vs estimated {} ({})", bytes_text(c->measured),
                                       bytes_text(c->predicted), change_pct(c->measured, c->predicted, true));
  if (c->within) return fmt::format("{}: within {:.0f}%", head, pct);
  using Why = metrics::ActivationCheck::Why;
  const std::string alt =
      fmt::format("{} ({})", bytes_text(c->alternative), change_pct(c->measured, c->alternative, true));
  std::string why;
  switch (c->why) {
    case Why::ScoresKept:
      why = "the estimate assumes the attention scores (a·s²·b a layer) are kept; without them it is " + alt +
            ": the run's attention likely keeps none (fused: SDPA flash or memory-efficient, FlashAttention)";
      break;
    case Why::ScoresNotKept:
      why = "the estimate assumes fused attention keeping no scores; with the a·s²·b scores kept it is " + alt +
            ": the run's attention likely keeps them (eager)";
      break;
    case Why::Checkpointing:
      why = "the estimate assumes full activation checkpointing; without it it is " + alt +
            ": the run likely keeps every layer's activations";
      break;
    case Why::NoCheckpointing:
      why = "the estimate assumes no recomputation; with full activation checkpointing it is " + alt +
            ": the run likely recomputes";
      break;
    case Why::PaperLayer:
      why =
          "the estimate is the paper's GPT layer (dropout's masks and outputs, a 4h-wide GeLU MLP, the scores "
          "kept), which the run's layers need not have; give the run's shape with its FFN width for its own";
      break;
    case Why::Unexplained:
    case Why::None:
      why =
          "no single assumption (scores kept, checkpointing) explains it; the estimate leaves out what the run "
          "keeps beside its layers (embedding outputs, logits and loss, small tables, the allocator's rounding)";
      break;
  }
  return fmt::format("{}: not within {:.0f}%: {}", head, pct, why);
}

std::string rest_unsplit(const metrics::RankMemory& m) {
  const bool rest = std::any_of(m.rows.begin(), m.rows.end(),
                                [](const metrics::MemoryRow& r) { return r.category == metrics::kMemoryRest; });
  if (!rest) return "";
  return "n/a: not split into cached free (reserved less allocated) and other allocated: no reserved total in the "
         "trace at the fullest moment (the PyTorch profiler's Total Reserved, or shardscope-train's "
         "memory.allocator_reserved, which it writes on a GPU)";
}

std::string memory_not_applicable(const metrics::RankMemory& m) {
  if (m.no_counters && m.states_na && !m.activations)
    return na_text(m.states_na) + "; and no memory.* counters in the trace";
  if (m.no_counters) return "n/a: no memory.* counters in the trace (prediction only)";
  return na_text(m.states_na);
}

std::string states_model(const metrics::RankMemory& m) {
  if (!m.config) return "";
  return describe(*m.config) + "; the same as `" + memory_command(*m.config) + "`";
}

std::string departs_most(const metrics::RankMemory& m) {
  if (m.all_agree)
    return fmt::format("none: every predicted category is within {:.0f}% of the model",
                       100 * metrics::kMemoryAgreement);
  if (!m.departs_most) return "";
  const metrics::MemoryRow& row = m.rows[*m.departs_most];
  const std::string by =
      *row.predicted > 0 ? change_pct(*row.measured, *row.predicted) : std::string("the model predicts none");
  return fmt::format("{}: measured {} vs predicted {} ({})", row.category, bytes_text(*row.measured),
                     bytes_text(*row.predicted), by);
}

std::string made_name(metrics::Made m) {
  switch (m) {
    case metrics::Made::AllGather: return "all-gather outputs (unsharded parameters)";
    case metrics::Made::ReduceScatter: return "reduce-scatter inputs (unsharded gradients)";
    case metrics::Made::Optimizer: return "optimizer state (first Optimizer.step)";
    case metrics::Made::Activations: return "activations (forward, freed in backward)";
    case metrics::Made::Other: return "other";
  }
  return "other";
}

std::string made_key(metrics::Made m) {
  switch (m) {
    case metrics::Made::AllGather: return "all_gather";
    case metrics::Made::ReduceScatter: return "reduce_scatter";
    case metrics::Made::Optimizer: return "optimizer_state";
    case metrics::Made::Activations: return "activations";
    case metrics::Made::Other: return "other";
  }
  return "other";
}

std::string measured_peak(const metrics::MeasuredMemory& m) {
  std::string s = "peak " + bytes_text(double(m.peak_allocated)) + " allocated";
  s += m.peak_in_step ? fmt::format(" in step {}", m.peak_step) : std::string(" outside the steps");
  if (!m.peak_again.empty()) {
    std::string again;
    for (size_t i = 0; i < m.peak_again.size(); ++i) again += (i ? ", " : "") + std::to_string(m.peak_again[i]);
    s += fmt::format(" (reached again in step{} {})", m.peak_again.size() == 1 ? "" : "s", again);
  }
  if (m.peak_reserved >= 0) s += "; at most " + bytes_text(double(m.peak_reserved)) + " reserved";
  return s;
}

std::string measured_caveats(const metrics::MeasuredMemory& m) {
  std::string s;
  if (m.chain_breaks > 0)
    s += fmt::format(
        "{} allocator event{} whose total is not the one before plus its own bytes: the trace lost events, so the "
        "rows need not add up to the peak",
        m.chain_breaks, m.chain_breaks == 1 ? "" : "s");
  if (m.other_device_events > 0)
    s += fmt::format("{}{} event{} of other devices left out (device {} analysed)", s.empty() ? "" : "; ",
                     m.other_device_events, m.other_device_events == 1 ? "" : "s", m.device);
  if (!m.backward_seen)
    s += std::string(s.empty() ? "" : "; ") +
         "no autograd::engine ranges in the trace: activations cannot be told apart (counted as other)";
  return s;
}

std::optional<double> predicted_for(const metrics::RankMemory& r, metrics::Made m) {
  const std::string_view cat = metrics::zero_counterpart(m);
  for (const metrics::MemoryRow& row : r.rows)
    if (!cat.empty() && row.category == cat) return row.predicted;
  return std::nullopt;
}

std::string predicted_na(const metrics::RankMemory& r, metrics::Made m) {
  const std::string_view cat = metrics::zero_counterpart(m);
  if (cat.empty()) return "n/a: the ZeRO model has no such category";
  for (const metrics::MemoryRow& row : r.rows)
    if (row.category == cat && !row.predicted) return na_text(row.predicted_na);
  return "n/a: the model says nothing about it";
}

std::string profile_memory_hint(std::string_view format) {
  if (format == "nsys")
    return "memory: no GPU memory events in the trace; record them with nsys profile --cuda-memory-usage=true";
  return "memory: no GPU memory events in the trace; record them with "
         "torch.profiler.profile(profile_memory=True)";
}

}  // namespace shardscope::report
