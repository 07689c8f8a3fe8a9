// SPEC's time metrics of one rank: per step, over all steps, and the whole-trace breakdown that equals HTA's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/metrics/intervals.h"
#include "model/trace.h"

namespace shardscope::metrics {

// The unions SPEC names, over a rank's device timeline: C (compute), M (communication), A (all activity).
struct DeviceSets {
  IntervalSet compute, comm, all;
  size_t device_events = 0;
};
DeviceSets device_sets(const model::Rank& rank);

// SPEC's quantities inside one window W.
struct WindowMetrics {
  int64_t window_ns = 0;   // |W|
  int64_t compute_ns = 0;  // |C|
  int64_t comm_ns = 0;     // |M|
  int64_t overlap_ns = 0;  // |M ∩ C|
  int64_t busy_ns = 0;     // |A|

  int64_t exposed_ns() const { return comm_ns - overlap_ns; }
  int64_t idle_ns() const { return window_ns - busy_ns; }
  std::optional<double> overlap_pct() const;        // n/a when |M| = 0
  std::optional<double> comm_fraction_pct() const;  // n/a when |W| = 0
  std::optional<double> exposed_fraction_pct() const;
  std::optional<double> idle_pct() const;
  std::optional<double> compute_pct() const;
  WindowMetrics& operator+=(const WindowMetrics& o);
};

WindowMetrics measure(const DeviceSets& sets, int64_t lo, int64_t hi);

// Device activity a step table leaves out: what starts before the first step's window, and what starts at
// or after the last step's end (a profiler's warm-up kernels, a final evaluation, ...).
struct OutsideSteps {
  size_t before_events = 0, after_events = 0;
  int64_t before_ns = 0, after_ns = 0;    // device-busy time there: the union of device activity
  int64_t first_step = 0, last_step = 0;  // the steps' own numbers
};
OutsideSteps outside_steps(const model::Rank& rank, const DeviceSets& sets);

// HTA's temporal breakdown and communication/computation overlap, reproduced: device events only, HTA's step
// filter (events whose launch falls after the last ProfilerStep are dropped), times rounded to whole
// microseconds as HTA does (start up, end down), window [first device event, last device event]. Beside them
// the same quantities of the same events unrounded, in the trace's own resolution (ns for Nsight and
// shardscope files, µs for Kineto, where both agree): µs rounding moves a share by whole points on short
// kernels.
struct HtaBreakdown {
  int64_t window_us = 0, busy_us = 0, compute_us = 0, comm_us = 0, overlap_us = 0;
  size_t device_events = 0;
  size_t left_out =
      0;  // device events HTA's step filter drops (launch not in the trace, or after the last ProfilerStep)
  int64_t window_ns = 0, busy_ns = 0, compute_ns = 0, comm_ns = 0, overlap_ns = 0;  // exact
  std::optional<double> overlap_pct() const;
  double idle_pct() const;
  double compute_pct() const;
  double non_compute_pct() const;
  // The exact figures, as a window's (overlap, idle and compute shares, exposed time).
  WindowMetrics exact() const;
  std::optional<double> exact_non_compute_pct() const;
};
// nullopt when the rank has no device events.
std::optional<HtaBreakdown> hta_breakdown(const model::Rank& rank);

// The HTA calls and setting hta_breakdown reproduces, for a report to name.
inline constexpr const char* kHtaSetting =
    "HTA's get_temporal_breakdown and get_comm_comp_overlap with include_last_profiler_step=True: window [first, last "
    "device event], whole µs";

}  // namespace shardscope::metrics
