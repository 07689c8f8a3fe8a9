// Memory measured from the GPU allocator's own events (model::AllocatorEvent: the PyTorch profiler's
// [memory] events under profile_memory=True): per step the peaks allocated and reserved, the rank's peak and
// the step it falls in, and the allocations alive at that peak grouped by what made them. Each group names
// the ZeRO model's category it stands beside (zero_counterpart), the seam where a prediction sits.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace shardscope::metrics {

// What made an allocation alive at the peak, from the host ranges around it on the thread that asked for it
// (checked in this order).
enum class Made : uint8_t {
  AllGather,      // inside FSDP2's FSDP::all_gather*, FSDP1's pre-forward/pre-backward unshard, an all-gather op
  ReduceScatter,  // inside FSDP2's FSDP::post_backward_reduce, FSDP1's post-backward hook, a reduce-scatter op
  Optimizer,      // inside the trace's first Optimizer.step#... range: the optimizer's state
  Activations,    // allocated in a step's forward, freed in the same step's backward
  Other,
};
inline constexpr int kMadeCount = 5;

struct MeasuredStep {
  int64_t step = 0;  // the trace's own number (ProfilerStep#N)
  int64_t peak_allocated = 0;
  int64_t peak_reserved = -1;  // -1 when the events do not say
};

struct MeasuredGroup {
  Made made = Made::Other;
  int64_t bytes = 0;
  int64_t allocations = 0;
};

struct MeasuredMemory {
  int64_t events = 0;  // allocator events of the device analysed; 0: nothing measured
  int32_t device = -1;
  int64_t other_device_events = 0;  // events of other devices, left out
  int64_t peak_allocated = 0;
  int64_t peak_reserved = -1;  // the largest reserved total of the trace, -1 unknown
  int64_t peak_ts_ns = 0;      // the first event that reached peak_allocated
  bool peak_in_step = false;
  int64_t peak_step = 0;             // the step (trace number) it falls in, when peak_in_step
  std::vector<int64_t> peak_again;   // the other steps whose own peak equals it
  std::vector<MeasuredStep> steps;   // the steps with allocator events, in order
  std::vector<MeasuredGroup> alive;  // at the peak, one per Made in its order (zero ones too)
  int64_t before_trace = 0;          // allocated when the trace began: the first event's total less its bytes
  int64_t before_trace_left = 0;     // of it, still allocated at the peak (frees of older blocks come off)
  // Events whose total is not the one before plus their own bytes: events the trace lost, so the groups
  // and the before-trace bytes need not add up to the peak.
  int64_t chain_breaks = 0;
  bool backward_seen = false;  // some step has autograd ranges, so activations can be told apart
};

// From rank.allocator and the host ranges; empty (events 0) when the trace has no allocator events.
MeasuredMemory measure_memory(const model::Rank& rank);

// The category of the ZeRO model's rows (memory_model.h) the group stands beside; "" for none.
std::string_view zero_counterpart(Made m);

}  // namespace shardscope::metrics
