#include "viewer/model/summary_lane.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace shardscope::viewer {

void summary_marks(const RankView& rv, const std::vector<uint32_t>& tracks, const Viewport& vp, std::vector<Mark>& out,
                   const std::vector<uint32_t>& derived) {
  const int width = std::max(1, vp.width_px);
  // Per column a few (colour, covered fraction) slots: a column rarely holds more than a few classes, and
  // when it does the least covered slot gives way.
  struct Slot {
    Rgb colour = 0;
    float cover = 0;
  };
  constexpr size_t kSlots = 4;
  std::vector<std::array<Slot, kSlots>> columns(static_cast<size_t>(width));
  std::vector<uint32_t> first_event(static_cast<size_t>(width), 0);
  std::vector<Mark> marks;
  LodOptions lod{.host_colours = &rv.host_colours};
  // Tracks first, then derived rows: one list of sources, each giving its marks.
  const size_t sources = tracks.size() + derived.size();
  for (size_t s = 0; s < sources; ++s) {
    marks.clear();
    if (s < tracks.size()) {
      const uint32_t t = tracks[s];
      if (t >= rv.tracks.size()) continue;
      track_marks(rv.rank->tracks[t], rv.tracks[t], vp, marks, lod);
    } else {
      const uint32_t d = derived[s - tracks.size()];
      if (d >= rv.derived.size()) continue;
      track_marks(rv.derived[d].events(*rv.rank), rv.derived[d].index, vp, marks, lod);
    }
    for (const Mark& m : marks) {
      const float lo = m.x0, hi = std::max(m.x1, m.x0 + 1);
      int x0 = std::max(0, int(std::floor(lo))), x1 = std::min(width, int(std::ceil(hi)));
      for (int x = x0; x < x1; ++x) {
        // Whole columns inside the mark cover 1; only its two ends are partial.
        float cover = x > x0 && x + 1 < x1 ? 1.0f : std::min<float>(float(x + 1), hi) - std::max<float>(float(x), lo);
        if (cover <= 0) continue;
        auto& col = columns[size_t(x)];
        if (col[0].cover == 0) first_event[size_t(x)] = m.event;
        // Most columns hold one colour: its slot is the first.
        Slot* s = &col[0];
        if (s->cover > 0 && s->colour != m.colour) {
          s = std::find_if(col.begin(), col.end(), [&](const Slot& q) { return q.cover > 0 && q.colour == m.colour; });
          if (s == col.end())
            s = std::min_element(col.begin(), col.end(),
                                 [](const Slot& a, const Slot& b) { return a.cover < b.cover; });
          if (s->colour != m.colour) *s = {m.colour, 0};
        }
        s->colour = m.colour;
        s->cover += cover;
      }
    }
  }
  // Each column's dominant colour, once; then runs of one colour become one mark each.
  std::vector<int64_t> dominant(static_cast<size_t>(width), -1);
  for (size_t x = 0; x < dominant.size(); ++x) {
    const auto& col = columns[x];
    const Slot& best =
        *std::max_element(col.begin(), col.end(), [](const Slot& a, const Slot& b) { return a.cover < b.cover; });
    if (best.cover > 0) dominant[x] = best.colour;
  }
  for (int x = 0; x < width;) {
    if (dominant[size_t(x)] < 0) {
      ++x;
      continue;
    }
    int end = x + 1;
    while (end < width && dominant[size_t(end)] == dominant[size_t(x)]) ++end;
    out.push_back({float(x), float(end), first_event[size_t(x)], uint32_t(end - x), 0, Rgb(dominant[size_t(x)])});
    x = end;
  }
}

}  // namespace shardscope::viewer
