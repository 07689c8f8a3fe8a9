#include "viewer/model/level_of_detail.h"

#include <algorithm>
#include <cmath>

namespace shardscope::viewer {

size_t TrackIndex::bytes() const {
  size_t b = lanes.capacity() * sizeof(LaneIndex);
  for (const LaneIndex& l : lanes) b += l.events.capacity() * sizeof(uint32_t) + l.max_end.capacity() * sizeof(int64_t);
  return b;
}

TrackIndex build_track_index(const model::Track& track, const std::vector<uint16_t>& depth) {
  TrackIndex t;
  uint16_t max_depth = 0;
  for (uint16_t d : depth) max_depth = std::max(max_depth, d);
  t.lanes.resize(track.events.empty() ? 0 : size_t(max_depth) + 1);
  if (t.lanes.size() == 1) {
    // One lane (a device stream): the lane is the track, no index list needed.
    LaneIndex& l = t.lanes[0];
    l.all = true;
    l.max_end.reserve(track.events.size());
    int64_t m = INT64_MIN;
    for (const model::Event& e : track.events) l.max_end.push_back(m = std::max(m, e.end_ns()));
    return t;
  }
  std::vector<size_t> counts(t.lanes.size());
  for (uint16_t d : depth) ++counts[d];
  for (size_t d = 0; d < t.lanes.size(); ++d) {
    t.lanes[d].events.reserve(counts[d]);
    t.lanes[d].max_end.reserve(counts[d]);
  }
  for (uint32_t i = 0; i < track.events.size(); ++i) {
    LaneIndex& l = t.lanes[depth[i]];
    int64_t end = track.events[i].end_ns();
    l.events.push_back(i);
    l.max_end.push_back(l.max_end.empty() ? end : std::max(l.max_end.back(), end));
  }
  return t;
}

namespace {

// First lane position whose running max end is past `ns` (nothing before it reaches ns).
uint32_t first_reaching(const LaneIndex& lane, uint32_t from, double ns) {
  auto it = std::upper_bound(lane.max_end.begin() + from, lane.max_end.end(), ns,
                             [](double v, int64_t e) { return v < double(e); });
  return uint32_t(it - lane.max_end.begin());
}

// First position at or after `from` whose running max end is at least `ns`. Galloping (1, 2, 4, ... ahead,
// then binary search in the last step): a run's end is usually near where it began, so this stays in a few
// cache lines instead of bisecting the whole lane for every pixel.
uint32_t first_at_least(const LaneIndex& lane, uint32_t from, double ns) {
  const uint32_t n = lane.size();
  uint32_t lo = from, step = 1;
  while (lo < n && double(lane.max_end[lo]) < ns) {
    uint32_t probe = lo + step;
    if (probe >= n || double(lane.max_end[probe]) >= ns) {
      auto it = std::lower_bound(lane.max_end.begin() + lo + 1, lane.max_end.begin() + std::min(probe, n), ns,
                                 [](int64_t e, double v) { return double(e) < v; });
      return uint32_t(it - lane.max_end.begin());
    }
    lo = probe;
    step *= 2;
  }
  return lo;
}

// One past the last lane position that starts before `ns`.
uint32_t end_before(const model::Track& track, const LaneIndex& lane, uint32_t from, double ns) {
  uint32_t lo = from, hi = lane.size();
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (double(track.events[lane.event(mid)].ts_ns) < ns) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

float clip_px(double x, int width) { return float(std::clamp(x, -1.0, double(width) + 1.0)); }

}  // namespace

void lane_marks(const model::Track& track, const LaneIndex& lane, uint16_t lane_no, const Viewport& vp,
                std::vector<Mark>& out, const LodOptions& options) {
  const double lo = vp.start_ns, hi = vp.end_ns();
  const double min_ns = options.min_px * vp.ns_per_px;
  uint32_t k = first_reaching(lane, 0, lo);
  const uint32_t stop = end_before(track, lane, k, hi);  // events starting at or after hi are not drawn
  while (k < stop) {
    const model::Event& e = track.events[lane.event(k)];
    Mark m;
    m.event = lane.event(k);
    m.lane = lane_no;
    m.colour = colour_of(e);
    if (double(e.dur_ns) >= min_ns) {
      m.x0 = clip_px(vp.x_of(double(e.ts_ns)), vp.width_px);
      m.x1 = clip_px(vp.x_of(double(e.end_ns())), vp.width_px);
      out.push_back(m);
      ++k;
      continue;
    }
    // A run of sub-pixel events: gallop. Everything whose running end stays within a pixel of the run's end
    // so far is in the run (such events are themselves under ~a pixel); then look at the event that breaks
    // the chain: if it starts within that pixel and is narrow too, the run goes on from it.
    uint32_t last = k;
    for (;;) {
      double next = double(lane.max_end[last]) + min_ns;
      uint32_t j = std::min(first_at_least(lane, last + 1, next), stop);
      if (j > last + 1) last = j - 1;
      if (j >= stop) break;
      const model::Event& b = track.events[lane.event(j)];
      if (double(b.ts_ns) < next && double(b.dur_ns) < min_ns) {
        last = j;
        continue;
      }
      break;
    }
    m.count = last - k + 1;
    m.x0 = clip_px(vp.x_of(double(e.ts_ns)), vp.width_px);
    m.x1 = clip_px(vp.x_of(double(lane.max_end[last])), vp.width_px);
    out.push_back(m);
    k = last + 1;
  }
}

void track_marks(const model::Track& track, const TrackIndex& index, const Viewport& vp, std::vector<Mark>& out,
                 const LodOptions& options) {
  for (size_t d = 0; d < index.lanes.size(); ++d) lane_marks(track, index.lanes[d], uint16_t(d), vp, out, options);
}

std::optional<uint32_t> hit_test(const model::Track& track, const LaneIndex& lane, double ns, double slack_ns) {
  uint32_t k = first_reaching(lane, 0, ns - slack_ns);
  uint32_t stop = end_before(track, lane, k, ns + slack_ns);
  std::optional<uint32_t> best;
  double best_d = 0;
  // Bounded: on a lane whose ranges nest, this is one or two events; on a folded run, the slack's worth.
  for (uint32_t n = 0; k < stop && n < 4096; ++k, ++n) {
    const model::Event& e = track.events[lane.event(k)];
    double d = ns < double(e.ts_ns) ? double(e.ts_ns) - ns : ns > double(e.end_ns()) ? ns - double(e.end_ns()) : 0;
    if (!best || d < best_d) best = lane.event(k), best_d = d;
    if (d == 0) break;
  }
  return best;
}

size_t visible_events(const model::Track& track, const LaneIndex& lane, double lo, double hi) {
  size_t n = 0;
  for (uint32_t k = 0; k < lane.size(); ++k) {
    const model::Event& e = track.events[lane.event(k)];
    if (double(e.ts_ns) < hi && double(e.end_ns()) > lo) ++n;
  }
  return n;
}

}  // namespace shardscope::viewer
