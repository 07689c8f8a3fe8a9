// What-if: the replay of a measured run (replay.h) with FSDP's prefetch, the rate limiter or the speed of
// communication or compute changed, and what that does to each steady step, to the exposed communication and
// to the backward all-gathers' hidden share. The unchanged replay is reported beside it, as the model's error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/metrics/replay.h"
#include "model/trace.h"

namespace shardscope::metrics {

enum class Prefetch : uint8_t { Pre, Post, None };

struct WhatIfChange {
  std::optional<Prefetch> backward;  // unset: as measured
  std::optional<bool> forward;       // forward prefetch on/off; unset: as measured
  std::optional<int> limit;          // all-gathers in flight; 0: no limit; unset: as measured
  double comm_speed = 1.0, compute_speed = 1.0;
  std::optional<int> unit;  // only this unit's all-gathers and compute change
};

// A timeline's figures over the steady steps, one per step number (slowest rank), and per unit.
struct StepFigures {
  int64_t step = 0;
  int64_t measured_ns = 0;   // the step as the trace has it
  int64_t unchanged_ns = 0;  // the unchanged replay
  int64_t predicted_ns = 0;  // with the change
};

struct UnitExposure {
  int unit = -1;
  int64_t measured_ns = 0, predicted_ns = 0;  // exposed all-gather time per steady step (mean over ranks)
};

struct WhatIf {
  std::vector<StepFigures> steps;  // steady steps
  double unchanged_error = 0;      // median |unchanged − measured| / measured over the steady steps
  int64_t measured_step_ns = 0, predicted_step_ns = 0;        // medians
  int64_t measured_exposed_ns = 0, predicted_exposed_ns = 0;  // exposed communication a step (mean)
  double measured_hidden = 0, predicted_hidden = 0;           // backward all-gathers' hidden share
  size_t backward_all_gathers = 0;                            // per rank and step, those it judged
  std::vector<UnitExposure> units;                            // by the change in exposure, largest first
  std::string measured_backward;                              // "pre", "post", "none" as read off the run
  bool settled = true;                                        // false: the wiring had a cycle
  bool host_is_device = false;  // a CPU run: the ranks' compute and collectives share the host's cores, which
                                // the replay cannot see (its predictions there are not to be trusted)
};

// Why check-prefetch's what-if line has no number.
enum class WhatIfNa : uint8_t {
  None,
  CpuRun,        // host_is_device: ranks contend for the same cores, outside the model
  ManyRanks,     // the replay holds every rank's graph at once; check-prefetch's own figures need none
  NotReplayable  // the files hold nothing to replay (rank summaries, no steady step with device work)
};

// Replays `g` unchanged and with `change`. Throws std::invalid_argument when it holds no steady step with
// device work to replay.
WhatIf what_if(const replay::Graph& g, const WhatIfChange& change);
// The same from a loaded trace (replay::build_graph).
WhatIf what_if(const model::Trace& trace, const WhatIfChange& change);

// The wiring of a change (exposed for the tests): the measured wiring with `change` applied.
replay::Wiring changed_wiring(const replay::Graph& g, const WhatIfChange& change);

}  // namespace shardscope::metrics
