// The trace model: a trace is ranks, a rank is tracks (threads, streams) of time-sorted events plus counter
// series and steps. Importers fill it; metrics, the CLI and the viewer read it. No output format here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/args.h"
#include "model/event.h"
#include "model/strings.h"
#include "tracer/format/run_shape.h"

namespace shardscope::model {

enum class TrackKind : uint8_t { HostThread, DeviceStream, Communication };

struct Track {
  int64_t pid = 0;  // process (Kineto: OS pid, or the device for GPU streams; shardscope: the rank)
  int64_t tid = 0;  // thread or stream
  std::string name;
  TrackKind kind = TrackKind::HostThread;
  std::vector<Event> events;  // sorted by ts_ns, then longest first (so a parent precedes its children)
};

struct CounterSample {
  int64_t ts_ns;
  double value;
};

struct CounterSeries {
  std::string name;
  std::vector<CounterSample> samples;  // sorted by ts_ns
  double peak() const;
};

// One allocation or free that the device's caching allocator reported (the PyTorch profiler's `[memory]`
// instant events under profile_memory=True): bytes > 0 allocated, < 0 freed at `addr`, and the allocator's
// totals just after it. The analysis pairs allocations with frees by address (metrics/memory_measured.h).
struct AllocatorEvent {
  int64_t ts_ns = 0;
  int64_t bytes = 0;
  int64_t total_allocated = 0;
  int64_t total_reserved = -1;  // -1 when the trace does not say
  uint64_t addr = 0;
  uint32_t track = UINT32_MAX;  // the host thread that asked (index into Rank::tracks); UINT32_MAX none
  int32_t device = 0;
};

// A training step. [start_ns, end_ns) is the window SPEC's per-step metrics use: the step range itself where
// the device timeline is the host (the trainer on CPU), or the device time the step's launches span.
struct Step {
  int64_t number = 0;  // the trace's own number: ProfilerStep#N, the trainer's args.step
  int64_t start_ns = 0, end_ns = 0;
  int64_t host_start_ns = 0, host_end_ns = 0;  // the host range that marked it
  bool aborted = false;  // the trace marks it as not completed (the trainer's args.aborted): left out of totals
};

// The job's first iteration records the execution order, creates communicators and fills the allocator: its
// step 0 is warm-up wherever the trace holds later steps too. A profiler window that opens later
// (ProfilerStep#2 first) holds no warm-up. One rule for the report's steady steps and check-prefetch's.
inline bool is_warm_up(int64_t first_number, size_t index, size_t steps) {
  return index == 0 && steps > 1 && first_number == 0;
}

// A (monotonic, realtime) reading of the rank's clocks, taken together: how its trace clock maps onto the
// wall clock, which is common to machines that run NTP/PTP while their monotonic clocks are unrelated.
struct ClockPair {
  int64_t trace_ns = 0;     // the trace's own clock (the tracer's CLOCK_MONOTONIC)
  int64_t realtime_ns = 0;  // CLOCK_REALTIME at that instant
};

// How a rank's FSDP units were identified: named by the trace (the trainer's args, FSDP2's module names),
// or inferred from the order of hooks that name no module (PyTorch FSDP1).
enum class UnitIdentity : uint8_t { Named, InferredFromOrder };

// Which rule made a rank's steps (docs/spec.md, "Steps"): the trace's own schedule, a rule the user gave,
// or one inferred where the trace has no step ranges.
enum class StepRule : uint8_t {
  None,           // no steps
  ProfilerStep,   // the PyTorch profiler's ProfilerStep#N ranges
  TrainerStep,    // the trainer's "step" ranges
  NamedRanges,    // ranges the default pattern names ("step 3", "iteration 3", ProfilerStep#3 in NVTX)
  StepPattern,    // --step-pattern
  StepMarker,     // --step-marker: a step starts at each range of that name
  OptimizerStep,  // inferred: a step ends at each Optimizer.step#... range
  Importer,       // a plugin's importer made them and did not say how
  Collectives,    // inferred: a step starts at each repetition of the collectives' repeating pattern
};

struct Rank {
  int rank = 0;
  int world_size = 0;
  std::string source;  // the file it came from
  std::string format;  // the importer that read it
  StringTable strings;
  std::vector<Track> tracks;
  std::vector<CounterSeries> counters;
  std::vector<AllocatorEvent> allocator;  // the GPU allocator's events, by time (file order among equal times)
  std::vector<Step> steps;                // sorted by start (importers sort them before events refer to them by index)
  nlohmann::json run_config;              // the trainer's configuration as written (null when the trace has none)
  trace::RunShape shape;                  // what run_config says, typed (set_run_config); Kineto's unit names
  nlohmann::json metadata;                // other header fields worth showing (null when none)
  std::vector<ClockPair> clock_sync;      // sorted by trace_ns; empty when the trace gives no mapping
  std::vector<std::string> warnings;      // what the importer noticed but could read past (truncation, ...)
  bool truncated = false;
  UnitIdentity unit_identity = UnitIdentity::Named;
  StepRule step_rule = StepRule::None;  // set with `steps`

  std::string_view str(StringId id) const { return strings.str(id); }
  size_t event_count() const;
  const CounterSeries* counter(std::string_view name) const;
  // run_config and the shape parsed from it, together: the one place run_config is read.
  void set_run_config(nlohmann::json cfg);
  // Sorts every track's events and the counters' samples; importers call it last.
  void finalize();
};

// Rank::finalize's orders: events by start, longest first (a parent before its children); counters by name.
inline bool event_before(const Event& a, const Event& b) {
  return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.dur_ns > b.dur_ns;
}
void sort_events(std::vector<Event>& events);
// events[j] becomes the old events[order[j]] for every j, in place (one event held aside a cycle, not a copy
// of them all); `order`, a permutation of the positions, is left as the identity.
void permute_events(std::vector<Event>& events, std::vector<uint32_t>& order);
void sort_counters(Rank& rank);  // the series by name, each one's samples by time

struct Trace {
  std::vector<Rank> ranks;  // sorted by rank
  // args[i]: ranks[i]'s event args (model/args.h), kept beside the ranks so that Rank, which plugins build,
  // keeps its layout. Empty when the loader was not asked for them; an entry is empty for a rank whose
  // importer keeps none.
  std::vector<EventArgs> args;
  const EventArgs* args_of(size_t rank_index) const { return rank_index < args.size() ? &args[rank_index] : nullptr; }
};

}  // namespace shardscope::model
