// Steps from a trace's own ranges. A trainer or a profiler schedule marks steps its own way (the trainer's
// "step" range, Kineto's ProfilerStep#N); an injected program marks them with whatever NVTX range it pushed
// ("step 3", "iteration 3", "train_step[3]"). A pattern names them: its first capture group is the number.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace shardscope::model {

// The pattern used when none is given: "step 3", "step#3", "Step 3", "iteration 3", "ProfilerStep#3".
inline constexpr const char* kDefaultStepPattern = R"(^(?:[Ss]tep|[Ii]teration|ProfilerStep)[ #_:]?(\d+)$)";

// A step pattern, matched against whole names in time linear in the name and stack that does not grow with
// it (RE2: a name from a hostile file may be megabytes long; backtracking engines overflow the stack on it).
// RE2's syntax: no backreferences or lookaround.
class StepPattern {
 public:
  // Throws std::invalid_argument with RE2's reason when `pattern` is not one.
  explicit StepPattern(const std::string& pattern = kDefaultStepPattern);
  ~StepPattern();
  StepPattern(StepPattern&&) noexcept;
  StepPattern& operator=(StepPattern&&) noexcept;
  // Whether the whole name matches; `number` is the first capture group's digits when there is one that
  // matched and fits in int64, else -1.
  bool match(std::string_view name, int64_t& number) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The rank's host ranges whose whole name matches `pattern`, as steps (sorted by start, windows on the host).
// A range nested in another match is left out (an outer "step 3" holding an inner "step 3" is one step).
std::vector<Step> steps_matching(const Rank& rank, const StepPattern& pattern);

// Steps marked by a range name the user gives (--step-marker): a step starts at each host range named exactly
// `name` and runs to the next one's start; the last runs to the end of the rank's last host event. A marker
// nested in another (starting before it ended) starts no step of its own. Numbered 0, 1, ... in order.
std::vector<Step> steps_from_marker(const Rank& rank, std::string_view name);

// The prefix of the PyTorch optimizer's step range ("Optimizer.step#AdamW.step"), recorded by the profiler
// for every optimizer whether or not a schedule marks steps.
inline constexpr std::string_view kOptimizerStepPrefix = "Optimizer.step#";

// Steps inferred from the optimizer (a trace without a profiler schedule): a step ends where an optimizer
// step range (kOptimizerStepPrefix; the outermost, where they nest) ends. Step 0 starts at the rank's first
// host event, each later step where the previous one ended; what runs after the last optimizer step is
// in no step. Numbered 0, 1, ... in order.
std::vector<Step> steps_from_optimizer(const Rank& rank);

// Steps inferred from the collectives (a trace with neither a schedule nor an optimizer step range): FSDP and
// DDP issue the same collectives every step, so the sequence of (kind, bytes) of the rank's collectives, in
// issue order, repeats with the step. Its smallest period P is taken where the whole sequence has it and
// holds at least two whole repetitions; a repetition begins at the longest run of all-gathers or all-reduces
// in the period (FSDP's forward all-gathers, DDP's buckets), so a capture that opens mid-step still finds
// the step's first collective. A step starts at that collective's issue and runs to the next repetition's
// (the last whole one to the end of the rank's last event); a partial repetition at either end is in
// no step. None where nothing repeats or no all-gather or all-reduce is in the period. Numbered 0, 1, ...
std::vector<Step> steps_from_collectives(const Rank& rank);

// Gives the rank these steps: each device event is tagged with the step whose host range holds its issue
// (its launch), and on a GPU rank each step's window becomes the device time its launches ran in: from its
// first device event to the next step's first (its last event's end for the last step).
void set_steps(Rank& rank, std::vector<Step> steps, bool device_windows);

// The device-window rule itself, for importers that tag events as they read them: lo[i]/hi[i] are the
// first start and last end of step i's device events (INT64_MAX/INT64_MIN: none, and the step keeps its
// host range). The idle time between steps belongs to the step that left the device idle.
void set_device_windows(std::vector<Step>& steps, const std::vector<int64_t>& lo, const std::vector<int64_t>& hi);

}  // namespace shardscope::model
