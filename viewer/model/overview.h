// The overview strip: the whole run at a glance, per rank the share of its tracks busy in each of a fixed
// number of time bins (built once after loading), with the timeline's visible window marked on it. The
// mapping between strip pixels and time lives here so a click on the strip is testable without widgets.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "viewer/model/timeline_layout.h"
#include "viewer/model/viewport.h"

namespace shardscope::viewer {

struct Overview {
  int64_t start_ns = 0, end_ns = 0;  // the run's span (the layout's)
  int bins = 0;
  std::vector<std::vector<float>> density;  // per layout rank, `bins` values in [0, 1]
};

// Busy time of each track's outermost lane (nested ranges would count twice), per bin, over the rank's
// tracks that have events. O(events + bins).
Overview build_overview(const TimelineLayout& layout, int bins = 2048);

// The visible window [x0, x1) in pixels of a strip `width` px wide (may reach beyond the strip).
std::pair<double, double> overview_window(const Overview& o, const Viewport& vp, int width);
// The viewport start that centres the view on strip pixel x, its zoom kept.
double overview_start_at(const Overview& o, const Viewport& vp, double x, int width);

}  // namespace shardscope::viewer
