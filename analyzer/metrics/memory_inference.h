// The ZeRO model's inputs read off a trace that carries no run_config (PyTorch's profiler, Nsight): the
// world size from the trace's header, the sharding strategy from the pattern of its collectives, the
// parameter count from one step's all-gather outputs (or, for DDP, its all-reduces), the parameters' dtype
// from the collectives' dtype, the optimizer from PyTorch's Optimizer.step#<Name>.step range. Each input says
// where it came from, or why it could not be read; a flag on `report` overrides any of them (MemoryGiven).
// Data only: report/memory_render.h words it. The rules: docs/memory.md, "Inputs from the trace".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "analyzer/metrics/prefetch.h"
#include "model/trace.h"
#include "sizing/zero_model.h"

namespace shardscope::metrics {

enum class InputOrigin : uint8_t {
  None,       // unknown: the input's `na` says why
  RunConfig,  // the trainer's run_config
  Inferred,   // read off the trace (`basis` says from what)
  Given,      // a flag on `report`
};

// What an inferred input was read from.
enum class InputBasis : uint8_t {
  None,
  TraceHeader,        // the trace's world size (Kineto's distributedInfo.world_size)
  GroupSize,          // the largest collective group (the header gives no world size)
  GatheredTwice,      // units all-gathered more than once in a step (forward, then again for backward): FULL_SHARD
  GatheredOnce,       // every unit all-gathered once a step (forward only, kept for backward): SHARD_GRAD_OP
  AllReduceOnly,      // all-reduces and no all-gather: NO_SHARD (DDP)
  TwoGroupSizes,      // all-gathers over a group smaller than the world, all-reduces beside them: HYBRID_SHARD
  GatherOutputs,      // one step's all-gather outputs, each unit's once: its padded flat parameters
  AllReduceElements,  // one step's all-reduced elements: DDP reduces each gradient once a step
  CollectiveDtype,    // the dtype the all-gathers (DDP: the all-reduces) name
  OptimizerRange,     // PyTorch's Optimizer.step#<Name>.step range
};

// Why an input could not be inferred.
enum class InferNa : uint8_t {
  None,
  NoWorldSize,       // neither the header nor any collective's group size says it
  NoCollectives,     // no all-gather and no all-reduce
  NoUnits,           // all-gathers that name no FSDP unit: forward and backward gathers cannot be told apart
  NoMessageSizes,    // the collectives carry no sizes (Gloo, the legacy profiler)
  NoSteps,           // the collectives fall in no step: "one step's" outputs cannot be taken
  NoStrategy,        // the parameter count is read by the strategy's rule, and the strategy is unknown
  NoDtype,           // no collective names its dtype
  MixedDtypes,       // `text`: the dtypes named ("Float, BFloat16")
  UnknownDtype,      // `text`: a dtype the model has no size for
  NoOptimizerRange,  // no Optimizer.step#... range
};

struct MemoryInput {
  InputOrigin origin = InputOrigin::None;
  InputBasis basis = InputBasis::None;
  InferNa na = InferNa::None;
  double value = 0;    // the world size; the parameter count
  std::string text;    // the strategy ("FULL_SHARD"), dtype ("fp32", "bf16"), optimizer ("AdamW"); or na's text
  int64_t events = 0;  // how many events it was read from
  int64_t step = -1;   // the trace's number of the step it was read from; -1: the whole trace
  EventRef at;         // one of those events (track -1: none)
  bool known() const { return origin != InputOrigin::None; }
};

struct MemoryInputs {
  MemoryInput world_size, sharding, params, dtype, optimizer;
  int64_t units = 0;        // distinct units all-gathered in the step the parameters came from
  double largest_unit = 0;  // its largest unit's gathered parameters (stage 3's gathered bytes)
  double root_unit = 0;     // a unit gathered once while the others are gathered twice: kept through backward
  int group_size = 0;       // HYBRID_SHARD: the sharding group (the all-gathers'), N in the model
  // Any input given, or the strategy read off the collectives: a trace with no collectives (one process)
  // has nothing to say about a sharded model, whatever its header's world size.
  bool inferred_or_given() const;
};

// What flags on `report` give; unset ones stay as inferred.
struct MemoryGiven {
  std::optional<double> params;
  std::optional<std::string> sharding, dtype, optimizer;
  std::optional<int> world_size;
  bool any() const { return params || sharding || dtype || optimizer || world_size; }
};

// The strategy's ZeRO stage for PyTorch's names and the trainer's, any case (FULL_SHARD, full_shard, zero3,
// SHARD_GRAD_OP, zero2, zero1, NO_SHARD, ddp, HYBRID_SHARD); nullopt for another name.
std::optional<int> stage_of_sharding(const std::string& name);
// PyTorch's name for the strategy ("FULL_SHARD", ...), from the same names.
std::string canonical_sharding(const std::string& name);
bool is_hybrid(const std::string& sharding);
// "fp32", "bf16", "fp16" for c10's names and ours ("Float", "float32", "BFloat16", "Half"); "" for another.
std::string canonical_dtype(const std::string& name);

// The inputs as the trace shows them.
MemoryInputs infer_memory_inputs(const model::Rank& rank);
// The inputs the run_config's configuration stands for (origin RunConfig), for a flag to override.
MemoryInputs inputs_from_config(const sizing::MemoryConfig& c);
// Flags over the inputs: each given one becomes origin Given.
void apply_given(MemoryInputs& in, const MemoryGiven& given);
// The model's configuration from the inputs (PyTorch FSDP's precision accounting); nullopt with the reason
// (MemoryNa::NoInferredInput, text the missing input's name) when one is unknown.
std::optional<sizing::MemoryConfig> config_from_inputs(const MemoryInputs& in, sizing::MemoryNa& why_not);

}  // namespace shardscope::metrics
