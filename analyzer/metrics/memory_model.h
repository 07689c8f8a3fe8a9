// SPEC's ZeRO memory model: model-state bytes per rank for a stage, a world size and dtypes; and, per rank,
// the measured bytes per category (the trainer's memory.* counters) beside that prediction.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/model/trace.h"

namespace shardscope::metrics {

struct MemoryConfig {
  double params = 0;          // Ψ
  int world = 1;              // N: ranks in the sharding group (ranks per node for HYBRID_SHARD)
  int stage = 3;              // 0 (DDP / NO_SHARD), 1, 2 (SHARD_GRAD_OP), 3 (FULL_SHARD)
  double param_bytes = 2;     // bytes per parameter
  double grad_bytes = 2;      // bytes per gradient
  double optimizer_bytes = 12;  // K
  bool offload = false;       // sharded state lives on the host
  double largest_unit_params = 0;  // stage 3: the largest unit's unsharded parameters while it runs
  int units_in_flight = 1;         // 2 with prefetch: the next unit is gathered while the current one runs
  double root_unit_params = 0;     // the root unit, kept unsharded from forward through backward
  double padded_params = 0;        // Ψ with each unit padded to a multiple of N (0: unknown, use params)
};

// "bf16"/"fp16" (mixed precision: 2 + 2 + 12) or "fp32" (4 + 4 + 8); false for an unknown name.
bool apply_dtype(MemoryConfig& c, const std::string& dtype);

struct MemoryPrediction {
  double params = 0;            // resident parameters (the shard under stage 3)
  double unsharded_params = 0;  // stage 3: gathered parameters: the largest unit (× units in flight) and the root
  double gradients = 0;
  double optimizer_state = 0;
  double host_offloaded = 0;    // what --offload moves to the host
  double model_states() const { return params + gradients + optimizer_state; }
};
MemoryPrediction predict(const MemoryConfig& c);

// The same model in the categories the trainer's memory.* counters use, for its precision scheme: an fp32
// master shard beside the parameters in their own dtype (so K = 4 + 8: master + AdamW moments), fp32
// gradients, and under stage 1-2 the full parameters kept in their dtype. Ψ is padded_params when known.
struct CounterPrediction {
  double sharded_params = 0;    // the fp32 master (the whole of it under stage 0)
  double unsharded_params = 0;  // peak: parameters in their dtype, gathered or kept
  double gradients = 0;
  double optimizer_state = 0;
  double host_offloaded = 0;
};
CounterPrediction predict_counters(const MemoryConfig& c);

// The configuration a trace's run_config describes; nullopt with the reason when it lacks what is needed.
std::optional<MemoryConfig> config_from_run(const nlohmann::json& run_config, int world_size, std::string& why_not);

struct MemoryRow {
  std::string category;       // the counter name without "memory."
  std::optional<double> measured;   // peak bytes; nullopt when the trace has no such counter
  std::optional<double> predicted;  // nullopt when the model says nothing about it
};

struct RankMemory {
  int rank = 0;
  std::vector<MemoryRow> rows;
  std::optional<MemoryConfig> config;
  std::string departs_most;   // the category furthest from its prediction, with by how much
  std::string activations_model;  // how the activations were predicted (activations.h), or why they were not
  std::string states_model;       // how the model states were predicted
  std::string not_applicable; // non-empty: why there is no comparison
};

RankMemory compare_memory(const model::Rank& rank);

}  // namespace shardscope::metrics
