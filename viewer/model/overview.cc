#include "viewer/model/overview.h"

#include <algorithm>

namespace shardscope::viewer {

Overview build_overview(const TimelineLayout& layout, int bins) {
  Overview o;
  o.start_ns = layout.start_ns();
  o.end_ns = std::max(layout.end_ns(), layout.start_ns() + 1);
  o.bins = std::max(1, bins);
  const double bin_ns = double(o.end_ns - o.start_ns) / o.bins;
  for (const RankView& rv : layout.ranks()) {
    std::vector<double> busy(size_t(o.bins), 0.0);
    int tracks = 0;
    for (size_t t = 0; t < rv.rank->tracks.size(); ++t) {
      const model::Track& track = rv.rank->tracks[t];
      if (track.events.empty() || rv.tracks[t].lanes.empty()) continue;
      ++tracks;
      const LaneIndex& lane = rv.tracks[t].lanes[0];
      for (uint32_t k = 0; k < lane.size(); ++k) {
        const model::Event& e = track.events[lane.event(k)];
        double a = double(e.ts_ns - o.start_ns) / bin_ns, b = double(e.end_ns() - o.start_ns) / bin_ns;
        a = std::clamp(a, 0.0, double(o.bins)), b = std::clamp(b, 0.0, double(o.bins));
        // The event's share of each bin it covers: partial at both ends.
        for (int i = int(a); i < o.bins && i < b; ++i) busy[size_t(i)] += std::min(b, i + 1.0) - std::max(a, double(i));
      }
    }
    std::vector<float>& d = o.density.emplace_back(size_t(o.bins), 0.0f);
    if (tracks > 0)
      for (int i = 0; i < o.bins; ++i) d[size_t(i)] = float(std::min(1.0, busy[size_t(i)] / tracks));
  }
  return o;
}

std::pair<double, double> overview_window(const Overview& o, const Viewport& vp, int width) {
  double span = double(o.end_ns - o.start_ns);
  if (span <= 0 || width <= 0) return {0, 0};
  double px = width / span;
  return {(vp.start_ns - o.start_ns) * px, (vp.end_ns() - o.start_ns) * px};
}

double overview_start_at(const Overview& o, const Viewport& vp, double x, int width) {
  double span = double(o.end_ns - o.start_ns);
  double at = o.start_ns + std::clamp(x, 0.0, double(std::max(1, width))) * span / std::max(1, width);
  return at - vp.ns_per_px * vp.width_px / 2;
}

}  // namespace shardscope::viewer
