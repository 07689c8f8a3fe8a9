#include "viewer/model/level_of_detail.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardscope::viewer {

size_t TrackIndex::bytes() const {
  size_t b = lanes.capacity() * sizeof(LaneIndex);
  for (const LaneIndex& l : lanes) {
    b += l.events.capacity() * sizeof(uint32_t) + l.max_end.capacity() * sizeof(int64_t);
    b += l.breaks.capacity() * sizeof(std::vector<float>);
    for (const std::vector<float>& level : l.breaks) b += level.capacity() * sizeof(float);
  }
  return b;
}

namespace {

// `Events`: a track's event vector, or RefEvents (a derived row): events[i] is the lane position's event.
template <class Events>
void build_breaks(const Events& events, LaneIndex& l) {
  const uint32_t n = l.size();
  std::vector<float> base(n);
  for (uint32_t k = 0; k < n; ++k) {
    const model::Event& e = events[l.event(k)];
    // Position 0 starts every run it is in; its break is never read.
    double gap = k == 0 ? 0.0 : double(e.ts_ns) - double(l.max_end[k - 1]);
    base[k] = float(std::max(gap, double(e.dur_ns)));
  }
  l.breaks.push_back(std::move(base));
  while (l.breaks.back().size() > kBreakFan) {
    const std::vector<float>& below = l.breaks.back();
    std::vector<float> up((below.size() + kBreakFan - 1) / kBreakFan, -INFINITY);
    for (size_t i = 0; i < below.size(); ++i) up[i / kBreakFan] = std::max(up[i / kBreakFan], below[i]);
    l.breaks.push_back(std::move(up));
  }
}

}  // namespace

template <class Events>
TrackIndex build_index(const Events& events, size_t n, const std::vector<uint16_t>& depth) {
  TrackIndex t;
  uint16_t max_depth = 0;
  for (uint16_t d : depth) max_depth = std::max(max_depth, d);
  t.lanes.resize(n == 0 ? 0 : size_t(max_depth) + 1);
  if (t.lanes.size() == 1) {
    // One lane (a device stream): the lane is the track, no index list needed.
    LaneIndex& l = t.lanes[0];
    l.all = true;
    l.max_end.reserve(n);
    int64_t m = INT64_MIN;
    for (uint32_t i = 0; i < n; ++i) l.max_end.push_back(m = std::max(m, events[i].end_ns()));
    build_breaks(events, l);
    return t;
  }
  std::vector<size_t> counts(t.lanes.size());
  for (uint16_t d : depth) ++counts[d];
  for (size_t d = 0; d < t.lanes.size(); ++d) {
    t.lanes[d].events.reserve(counts[d]);
    t.lanes[d].max_end.reserve(counts[d]);
  }
  for (uint32_t i = 0; i < n; ++i) {
    LaneIndex& l = t.lanes[depth[i]];
    int64_t end = events[i].end_ns();
    l.events.push_back(i);
    l.max_end.push_back(l.max_end.empty() ? end : std::max(l.max_end.back(), end));
  }
  for (LaneIndex& l : t.lanes) build_breaks(events, l);
  return t;
}

TrackIndex build_track_index(const model::Track& track, const std::vector<uint16_t>& depth) {
  return build_index(track.events, track.events.size(), depth);
}

TrackIndex build_track_index(const RefEvents& events, const std::vector<uint16_t>& depth) {
  return build_index(events, events.refs->size(), depth);
}

namespace {

// First lane position whose running max end is past `ns` (nothing before it reaches ns).
uint32_t first_reaching(const LaneIndex& lane, uint32_t from, double ns) {
  auto it = std::upper_bound(lane.max_end.begin() + from, lane.max_end.end(), ns,
                             [](double v, int64_t e) { return v < double(e); });
  return uint32_t(it - lane.max_end.begin());
}

// First position at or after `from` whose running max end is at least `ns`. Galloping (1, 2, 4, ... ahead,
// then binary search in the last step): a run's end is near where it began, so this stays in a few cache
// lines instead of bisecting the whole lane for every pixel.
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
template <class Events>
uint32_t end_before(const Events& events, const LaneIndex& lane, uint32_t from, double ns) {
  uint32_t lo = from, hi = lane.size();
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (double(events[lane.event(mid)].ts_ns) < ns) lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

float clip_px(double x, int width) { return float(std::clamp(x, -1.0, double(width) + 1.0)); }

}  // namespace

uint32_t first_break(const LaneIndex& lane, uint32_t from, uint32_t to, float ns) {
  if (from >= to || lane.breaks.empty()) return to;
  const size_t top = lane.breaks.size() - 1;
  size_t level = 0, i = from, shift = 0;  // level l's entry i covers positions [i << shift, (i + 1) << shift)
  // Up: finish the current block at each level; a block with nothing wide enough sends the search one level up.
  for (;;) {
    const std::vector<float>& v = lane.breaks[level];
    const size_t block_end = level == top ? v.size() : std::min(v.size(), (i / kBreakFan + 1) * kBreakFan);
    for (; i < block_end; ++i) {
      if ((i << shift) >= to) return to;
      if (v[i] >= ns) goto down;
    }
    if (level == top || i >= v.size()) return to;  // past the lane's last position
    i /= kBreakFan;
    ++level;
    shift += kBreakShift;
  }
down:
  // Down: the block under entry i holds the first wide-enough break.
  while (level > 0) {
    --level;
    const std::vector<float>& v = lane.breaks[level];
    size_t j = i * kBreakFan, e = std::min(v.size(), j + kBreakFan);
    while (j < e && v[j] < ns) ++j;
    i = j;
  }
  return uint32_t(std::min<size_t>(i, to));
}

namespace {

template <class Events>
void marks_of_lane(const Events& events, const LaneIndex& lane, uint16_t lane_no, const Viewport& vp,
                   std::vector<Mark>& out, const LodOptions& options) {
  const double lo = vp.start_ns, hi = vp.end_ns();
  const double min_ns = options.min_px * vp.ns_per_px;
  uint32_t k = first_reaching(lane, 0, lo);
  const uint32_t stop = end_before(events, lane, k, hi);  // events starting at or after hi are not drawn
  while (k < stop) {
    const model::Event& e = events[lane.event(k)];
    Mark m;
    m.event = lane.event(k);
    m.lane = lane_no;
    m.colour = colour_of(e, options.host_colours);
    if (double(e.dur_ns) >= min_ns) {
      m.x0 = clip_px(vp.x_of(double(e.ts_ns)), vp.width_px);
      m.x1 = clip_px(vp.x_of(double(e.end_ns())), vp.width_px);
      out.push_back(m);
      ++k;
      continue;
    }
    // A run of sub-pixel events: it goes on while each next event starts less than a pixel after the running
    // end of those before it and is itself narrower than a pixel, and it reaches at most max_run_px past its
    // start: every few pixels of a busy stream keep the colour of an event there, so a zoomed-out stream
    // still shows what it is made of (all-gathers beside reduce-scatters). Only the run's end positions are
    // read (running ends, breaks), never the events in between.
    const double reach = double(e.ts_ns) + options.max_run_px * vp.ns_per_px;
    const uint32_t capped = std::min(first_at_least(lane, k, reach) + 1, stop);  // the event ending past reach is in
    const uint32_t last = first_break(lane, k + 1, capped, float(min_ns)) - 1;
    m.count = last - k + 1;
    m.x0 = clip_px(vp.x_of(double(e.ts_ns)), vp.width_px);
    m.x1 = clip_px(vp.x_of(double(lane.max_end[last])), vp.width_px);
    out.push_back(m);
    k = last + 1;
  }
}

template <class Events>
std::optional<uint32_t> hit(const Events& events, const LaneIndex& lane, double ns, double slack_ns) {
  uint32_t k = first_reaching(lane, 0, ns - slack_ns);
  uint32_t stop = end_before(events, lane, k, ns + slack_ns);
  std::optional<uint32_t> best;
  double best_d = 0;
  // Bounded: on a lane whose ranges nest, this is one or two events; on a folded run, the slack's worth.
  for (uint32_t n = 0; k < stop && n < 4096; ++k, ++n) {
    const model::Event& e = events[lane.event(k)];
    double d = ns < double(e.ts_ns) ? double(e.ts_ns) - ns : ns > double(e.end_ns()) ? ns - double(e.end_ns()) : 0;
    if (!best || d < best_d) best = lane.event(k), best_d = d;
    if (d == 0) break;
  }
  return best;
}

}  // namespace

void lane_marks(const model::Track& track, const LaneIndex& lane, uint16_t lane_no, const Viewport& vp,
                std::vector<Mark>& out, const LodOptions& options) {
  marks_of_lane(track.events, lane, lane_no, vp, out, options);
}

void track_marks(const model::Track& track, const TrackIndex& index, const Viewport& vp, std::vector<Mark>& out,
                 const LodOptions& options) {
  for (size_t d = 0; d < index.lanes.size(); ++d)
    marks_of_lane(track.events, index.lanes[d], uint16_t(d), vp, out, options);
}

void track_marks(const RefEvents& events, const TrackIndex& index, const Viewport& vp, std::vector<Mark>& out,
                 const LodOptions& options) {
  for (size_t d = 0; d < index.lanes.size(); ++d) marks_of_lane(events, index.lanes[d], uint16_t(d), vp, out, options);
}

std::optional<uint32_t> hit_test(const model::Track& track, const LaneIndex& lane, double ns, double slack_ns) {
  return hit(track.events, lane, ns, slack_ns);
}

std::optional<uint32_t> hit_test(const RefEvents& events, const LaneIndex& lane, double ns, double slack_ns) {
  return hit(events, lane, ns, slack_ns);
}

size_t visible_events(const model::Track& track, const LaneIndex& lane, double lo, double hi) {
  size_t n = 0;
  for (uint32_t k = 0; k < lane.size(); ++k) {
    const model::Event& e = track.events[lane.event(k)];
    if (double(e.ts_ns) < hi && double(e.end_ns()) > lo) ++n;
  }
  return n;
}

std::vector<size_t> labelled_marks(const std::vector<Mark>& marks, float min_px) {
  std::vector<size_t> out;
  int lane = -1;
  float end = 0;
  for (size_t i = 0; i < marks.size(); ++i) {
    const Mark& m = marks[i];
    if (m.lane != lane) lane = m.lane, end = -std::numeric_limits<float>::infinity();
    if (m.count != 1 || std::max(1.0f, m.x1 - m.x0) <= min_px || m.x0 < end) continue;
    out.push_back(i);
    end = m.x1;
  }
  return out;
}

}  // namespace shardscope::viewer
