// The visible time window of the timeline: where it starts, how many nanoseconds one pixel holds, and how
// wide it is. Everything that maps time to pixels goes through here, so zoom and pan are testable alone.
#pragma once

#include <algorithm>
#include <cstdint>

namespace shardscope::viewer {

struct Viewport {
  double start_ns = 0;
  double ns_per_px = 1;
  int width_px = 1;

  double end_ns() const { return start_ns + ns_per_px * width_px; }
  double x_of(double ns) const { return (ns - start_ns) / ns_per_px; }
  double ns_at(double x) const { return start_ns + x * ns_per_px; }

  // Shows [lo, hi) across the width.
  static Viewport fit(int64_t lo, int64_t hi, int width_px) {
    Viewport v;
    v.width_px = std::max(1, width_px);
    v.start_ns = double(lo);
    v.ns_per_px = std::max(1e-3, double(hi - lo) / v.width_px);
    return v;
  }
  // Zooms by `factor` (< 1: in) keeping the time under pixel x where it is.
  void zoom_around(double x, double factor) {
    double at = ns_at(x);
    ns_per_px = std::clamp(ns_per_px * factor, 1e-3, 1e15);
    start_ns = at - x * ns_per_px;
  }
  void pan_px(double dx) { start_ns += dx * ns_per_px; }
};

}  // namespace shardscope::viewer
