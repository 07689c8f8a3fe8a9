#include "viewer/model/overview.h"

#include <algorithm>

#include "model/saturating.h"

namespace shardscope::viewer {

Overview build_overview(const TimelineLayout& layout, int bins) {
  Overview o;
  o.start_ns = layout.start_ns();
  // Saturating, and spans as ns_span: a hostile trace's times may sit at the int64 bounds or span all of it.
  o.end_ns = std::max(layout.end_ns(), model::sat_add(layout.start_ns(), 1));
  o.bins = std::max(1, bins);
  const double bin_ns = std::max(1.0, ns_span(o.start_ns, o.end_ns)) / o.bins;  // a run at INT64_MAX has no span
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
        double a = ns_span(o.start_ns, e.ts_ns) / bin_ns, b = ns_span(o.start_ns, e.end_ns()) / bin_ns;
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
  double span = ns_span(o.start_ns, o.end_ns);
  if (span <= 0 || width <= 0) return {0, 0};
  double px = width / span;
  return {(vp.start_ns - o.start_ns) * px, (vp.end_ns() - o.start_ns) * px};
}

double overview_start_at(const Overview& o, const Viewport& vp, double x, int width) {
  double span = ns_span(o.start_ns, o.end_ns);
  double at = double(o.start_ns) + std::clamp(x, 0.0, double(std::max(1, width))) * span / std::max(1, width);
  return at - vp.ns_per_px * vp.width_px / 2;
}

}  // namespace shardscope::viewer
