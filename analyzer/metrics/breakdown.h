// SPEC's time metrics of one rank: per step, over all steps, and the whole-trace breakdown that equals HTA's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/metrics/intervals.h"
#include "analyzer/model/trace.h"

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
  std::optional<double> overlap_pct() const;         // n/a when |M| = 0
  std::optional<double> comm_fraction_pct() const;   // n/a when |W| = 0
  std::optional<double> exposed_fraction_pct() const;
  std::optional<double> idle_pct() const;
  std::optional<double> compute_pct() const;
  WindowMetrics& operator+=(const WindowMetrics& o);
};

WindowMetrics measure(const DeviceSets& sets, int64_t lo, int64_t hi);

// HTA's temporal breakdown and communication/computation overlap, reproduced: device events only, HTA's step
// filter (events whose launch falls after the last ProfilerStep are dropped), times rounded to whole
// microseconds as HTA does (start up, end down), window [first device event, last device event].
struct HtaBreakdown {
  int64_t window_us = 0, busy_us = 0, compute_us = 0, comm_us = 0, overlap_us = 0;
  size_t device_events = 0;
  std::optional<double> overlap_pct() const;
  double idle_pct() const;
  double compute_pct() const;
  double non_compute_pct() const;
};
// nullopt when the rank has no device events.
std::optional<HtaBreakdown> hta_breakdown(const model::Rank& rank);

}  // namespace shardscope::metrics
