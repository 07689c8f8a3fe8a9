#include "viewer/model/summary_lane.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace shardscope::viewer {

void summary_marks(const RankView& rv, const std::vector<uint32_t>& tracks, const Viewport& vp, std::vector<Mark>& out) {
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
  for (uint32_t t : tracks) {
    if (t >= rv.tracks.size()) continue;
    marks.clear();
    track_marks(rv.rank->tracks[t], rv.tracks[t], vp, marks, lod);
    for (const Mark& m : marks) {
      int x0 = std::max(0, int(std::floor(m.x0))), x1 = std::min(width, int(std::ceil(std::max(m.x1, m.x0 + 1))));
      for (int x = x0; x < x1; ++x) {
        float cover = std::min<float>(float(x + 1), std::max(m.x1, m.x0 + 1)) - std::max<float>(float(x), m.x0);
        if (cover <= 0) continue;
        auto& col = columns[size_t(x)];
        Slot* s = std::find_if(col.begin(), col.end(), [&](const Slot& q) { return q.cover > 0 && q.colour == m.colour; });
        if (s == col.end()) s = std::min_element(col.begin(), col.end(), [](const Slot& a, const Slot& b) { return a.cover < b.cover; });
        if (s->colour != m.colour) *s = {m.colour, 0};
        if (s->cover == 0 && col[0].cover == 0) first_event[size_t(x)] = m.event;
        s->cover += cover;
      }
    }
  }
  // Columns to runs: one mark per stretch of one dominant colour.
  for (int x = 0; x < width;) {
    const auto& col = columns[size_t(x)];
    const Slot& best = *std::max_element(col.begin(), col.end(), [](const Slot& a, const Slot& b) { return a.cover < b.cover; });
    if (best.cover <= 0) {
      ++x;
      continue;
    }
    int end = x + 1;
    for (; end < width; ++end) {
      const auto& c = columns[size_t(end)];
      const Slot& b = *std::max_element(c.begin(), c.end(), [](const Slot& p, const Slot& q) { return p.cover < q.cover; });
      if (b.cover <= 0 || b.colour != best.colour) break;
    }
    out.push_back({float(x), float(end), first_event[size_t(x)], uint32_t(end - x), 0, best.colour});
    x = end;
  }
}

}  // namespace shardscope::viewer
