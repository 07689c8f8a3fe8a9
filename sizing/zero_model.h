// The ZeRO memory model: model-state bytes per rank for a stage, a sharding group and a precision scheme
// (SPEC, docs/spec.md), and the rules the trainer and the model share: how a unit is padded, how many units
// are gathered at once. The trainer, `shardscope memory` and the report all predict through predict() below:
// one model, not two formulas.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tracer/format/run_shape.h"

namespace shardscope::sizing {

// A unit's flat parameter padded to a multiple of the shard count, as FSDP flattens it (every rank then holds
// an equal shard).
constexpr int64_t padded_numel(int64_t numel, int64_t shard_count) {
  return (numel + shard_count - 1) / shard_count * shard_count;
}

// Stage 3 holds the running unit gathered, and with prefetch (backward or forward) the next one too.
constexpr int units_in_flight(bool backward_prefetch, bool forward_prefetch) {
  return backward_prefetch || forward_prefetch ? 2 : 1;
}

// How the states are kept under mixed precision (parameters in bf16/fp16). Both keep an fp32 master copy
// of the parameters, sharded from stage 1 on, and AdamW's two fp32 moments (so K = 4 + 8 = 12 bytes):
// - Zero: the ZeRO paper's accounting (Rajbhandari et al. 2020, figure 1): gradients in the parameters'
//   dtype, and under stage 3 a shard of the parameters in their dtype beside the fp32 master shard.
// - Fsdp: PyTorch FSDP's mixed precision, which shardscope-train follows: fp32 gradients (the sharded
//   gradient is kept in the master's dtype), and under stage 3 only the fp32 shard (the parameters'
//   dtype copy is made for each all-gather).
// In fp32 the two agree.
enum class Precision { Zero, Fsdp };

struct MemoryConfig {
  double params = 0;         // Ψ
  double padded_params = 0;  // Ψ with each unit padded to a multiple of N (0: unknown, use params)
  int world = 1;             // N: ranks in the sharding group (ranks per node for HYBRID_SHARD)
  int stage = 3;             // 0 (DDP / NO_SHARD), 1, 2 (SHARD_GRAD_OP), 3 (FULL_SHARD)
  double param_bytes = 2;    // the parameters' dtype: what the model computes with and all-gathers
  Precision precision = Precision::Zero;
  bool offload = false;            // stages 2-3: the sharded state (fp32 master, gradients, moments) lives on the host
  double largest_unit_params = 0;  // stage 3: the largest unit's parameters, gathered while it runs (0: unknown)
  int units_in_flight = 2;         // stage 3: units_in_flight() below
  double root_unit_params = 0;     // the root unit, kept gathered from forward through backward

  double grad_bytes() const { return precision == Precision::Fsdp ? 4 : param_bytes; }
};

// "bf16"/"fp16" (2-byte parameters) or "fp32" (4); false for an unknown name.
bool apply_dtype(MemoryConfig& c, const std::string& dtype);
std::string precision_name(Precision p);  // "zero", "fsdp"

// Per rank, by category. The report's rows: sharded_params = master + params_shard, unsharded_params =
// params + gathered, gradients, optimizer_state, host_offloaded.
struct MemoryPrediction {
  double master =
      0;  // the fp32 master: its shard (stages 1-3), the whole of it (stage 0; in fp32 DDP it is the parameter itself)
  double params_shard = 0;  // Zero, stage 3, mixed precision: the shard in the parameters' dtype
  double params = 0;  // stages 0-2: the whole parameters in their dtype (none in fp32 DDP: the master is the parameter)
  double gathered = 0;  // stage 3: the units gathered at the peak: the largest × units in flight, and the root
  double gradients = 0;
  double optimizer_state = 0;  // AdamW's two fp32 moments
  double host_offloaded = 0;   // what offload moves to the host
  double sharded_params() const { return master + params_shard; }
  double unsharded_params() const { return params + gathered; }
  // What stays on the device between steps: everything but the units gathered while they run.
  double model_states() const { return master + params_shard + params + gradients + optimizer_state; }
};
MemoryPrediction predict(const MemoryConfig& c);

// Why a memory figure or the whole comparison is missing: a code and its parameters; report/memory_render.h
// words it.
struct MemoryNa {
  enum class Code : uint8_t {
    None,
    NoRunConfig,            // the trace has no run_config: no model-state prediction
    NoSharding,             // run_config does not say the sharding strategy
    UnknownSharding,        // `text`: the strategy it names
    ImplausibleUnitParams,  // run_config.units[index] gives `value` parameters
    NoUnitParams,           // run_config lists no units with parameter counts
    NoActivationRunConfig,  // the trace has no run_config: no activation prediction
    NoActivationInputs,     // `text`: the run_config keys the activation formula lacks ("model.dim, batch_size")
    NoCounter,              // the trace has no memory.* counter for this category
    ModelSilent,            // the model says nothing about this category
    NoOffload,              // the run does not offload
    AllocatorTotal,         // the model predicts categories, not the allocator's total
    NoInferredInput,       // no run_config, and `text` (world_size, sharding, params, dtype) was not read off the trace
    OptimizerNotModelled,  // `text`: the optimizer ("" unknown); the model counts AdamW's two fp32 moments
    Rest,                  // the allocator total's bytes no category counts: not a category the model has
  };
  Code code = Code::None;
  std::string text;
  double value = 0;
  size_t index = 0;
  explicit operator bool() const { return code != Code::None; }
};

// The configuration a trace's run_config describes (shardscope-train's: Precision::Fsdp); nullopt with the
// reason when it lacks what is needed.
std::optional<MemoryConfig> config_from_run(const trace::RunShape& run, int world_size, MemoryNa& why_not);

}  // namespace shardscope::sizing
