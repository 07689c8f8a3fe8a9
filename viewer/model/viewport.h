// The visible time window of the timeline: where it starts, how many nanoseconds one pixel holds, and how
// wide it is. Everything that maps time to pixels goes through here, so zoom and pan are testable alone.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace shardscope::viewer {

// hi − lo in double, for any two int64 times: the difference is exact in 128 bits (in int64 it may overflow)
// and rounded once, so spans of epoch-ns times keep their nanoseconds (double(hi) − double(lo) would not).
inline double ns_span(int64_t lo, int64_t hi) { return double(__int128(hi) - lo); }

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
    v.ns_per_px = std::max(1e-3, ns_span(lo, hi) / v.width_px);
    return v;
  }
  // A time in ns (from ns_at: any double once zoomed out or panned far) as an int64, held at the int64 bounds;
  // converting a double outside them is undefined. NaN gives 0.
  static int64_t to_ns(double ns) {
    if (std::isnan(ns)) return 0;
    if (ns >= 0x1p63) return INT64_MAX;
    if (ns < -0x1p63) return INT64_MIN;
    return int64_t(ns);
  }
  // Zooms by `factor` (< 1: in) keeping the time under pixel x where it is.
  void zoom_around(double x, double factor) {
    double at = ns_at(x);
    ns_per_px = std::clamp(ns_per_px * factor, 1e-3, 1e15);
    start_ns = at - x * ns_per_px;
  }
  void pan_px(double dx) { start_ns += dx * ns_per_px; }
  // Keeps the window inside [lo, hi]: zoomed out no further than the whole of it, panned no further than
  // its ends (a wheel or a held D key otherwise runs off into empty time). An empty [lo, hi] leaves it.
  void clamp_to(int64_t lo, int64_t hi) {
    double span = ns_span(lo, hi);
    if (!(span > 0)) return;
    ns_per_px = std::min(ns_per_px, span / std::max(1, width_px));
    double visible = ns_per_px * width_px;
    start_ns = std::max(double(lo), std::min(start_ns, double(lo) + (span - visible)));
  }
};

}  // namespace shardscope::viewer
