// Per rank, the measured bytes per category (the trainer's memory.* counters) beside the ZeRO model's
// prediction (sizing/zero_model.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/metrics/memory_measured.h"
#include "analyzer/metrics/memory_inference.h"
#include "model/trace.h"
#include "sizing/activations.h"
#include "sizing/zero_model.h"

namespace shardscope::metrics {

// Within this share of its prediction a measured category agrees with the model.
inline constexpr double kMemoryAgreement = 0.05;

struct MemoryRow {
  std::string category;                        // the counter name without "memory."
  std::optional<double> measured;              // peak bytes; nullopt when the trace has no such counter
  std::optional<double> predicted;             // nullopt when the model says nothing about it
  sizing::MemoryNa measured_na, predicted_na;  // why a value is missing
  // The row's bytes at the allocator total's sample where the categories together hold the most, so that
  // the rows add up to that total (the "rest" row holds what no category counts); nullopt without an
  // allocator total, and for host_offloaded (the host's).
  std::optional<double> at_fullest;
};

// The category of the row that holds the allocator total's bytes no category counts.
inline constexpr const char* kMemoryRest = "rest";
// Where the allocator's events give its reserved total at the fullest moment (the PyTorch profiler's Total
// Reserved), the rest row is these two instead: the blocks the caching allocator holds free (reserved less
// allocated), and the rest less them (tensors no category counts, the CUDA context, NCCL's and cuBLAS's
// buffers). Both carry predicted_na Rest with their own name as its text.
inline constexpr const char* kMemoryCachedFree = "cached_free";
inline constexpr const char* kMemoryOtherAllocated = "other_allocated";
// Where the trace samples the caching allocator's reserved and allocated bytes with the total (shardscope-train
// on a GPU), other_allocated is the allocated bytes no category counts, and this the total less reserved: the
// CUDA context, NCCL's buffers, other libraries' and processes' memory on the device.
inline constexpr const char* kMemoryOutsideAllocator = "outside_allocator";
// Where the trace has the reserved total and the device's used memory but no allocated total (the injection
// library's: the cudaMallocs PyTorch's caching allocator asked for), the rest is this and outside_allocator.
inline constexpr const char* kMemoryAllocatorReservedRow = "allocator_reserved";
bool is_rest_row(const std::string& category);

struct RankMemory {
  int rank = 0;
  std::vector<MemoryRow> rows;
  std::optional<sizing::MemoryConfig> config;
  // The row (index into rows) furthest from its prediction, relative to it; nullopt when no row has both.
  std::optional<size_t> departs_most;
  bool all_agree = false;  // every row with both values is within kMemoryAgreement of its prediction
  std::optional<sizing::ActivationPrediction> activations;  // how the activations were predicted (activations.h)
  sizing::MemoryNa activations_na;                          // or why they were not
  // Why there is no comparison: no memory.* counters in the trace (no_counters), and why there is no
  // prediction (states_na; None when there is one).
  bool no_counters = false;
  sizing::MemoryNa states_na;
  // What the GPU allocator's own events measured (PyTorch profiler traces); events 0 when the trace has none.
  MeasuredMemory measured;

  // The configuration's inputs: from run_config, or, without one, read off the trace (memory_inference.h);
  // flags on `report` override them (give_memory_inputs).
  MemoryInputs inputs;
  bool state_counters = false;  // the trace has memory.* counters for the model states (a silent one measured 0)
};

RankMemory compare_memory(const model::Rank& rank);

// Within this share of the measured activations the activation estimate agrees with the run.
inline constexpr double kActivationAgreement = 0.15;

// The activation estimate beside the activations measured, and, where it is off by more than
// kActivationAgreement, the assumption that explains it: the estimate made again with one assumption the
// other way that lands within it (attention scores kept or not, full checkpointing or none), else the
// paper's GPT layer (dropout, a 4h-wide GeLU MLP) where it was used, else none found.
struct ActivationCheck {
  double measured = 0, predicted = 0;
  bool within = false;
  enum class Why { None, ScoresKept, ScoresNotKept, Checkpointing, NoCheckpointing, PaperLayer, Unexplained };
  Why why = Why::None;
  double alternative = 0;  // the estimate with the assumption the other way (ScoresKept ... NoCheckpointing)
};
// nullopt without both an activation estimate and a measured activations row.
std::optional<ActivationCheck> check_activations(const RankMemory& m);
// The flags' values over the inputs, and the predictions made again from them: applied to a rank's
// comparison after it was summarised, so that a summary file takes flags too.
void give_memory_inputs(RankMemory& m, const MemoryGiven& given);

}  // namespace shardscope::metrics
