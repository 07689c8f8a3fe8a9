#include "viewer/app/timeline_frame.h"

#include <algorithm>

namespace shardscope::viewer {

int TimelineFrame::row_top(int row) const {
  const Row& r = rows->rows()[size_t(row)];
  return kRulerHeight + r.y - (size_t(row) < rows->pinned_count() ? 0 : y_scroll);
}

int TimelineFrame::row_at(QPoint pos, int* lane) const {
  if (pos.y() < kRulerHeight) return -1;
  int y = pos.y() - kRulerHeight;
  return rows->row_at(y < rows->pinned_height() ? y : y + y_scroll, lane);
}

std::optional<QRectF> TimelineFrame::event_rect(uint32_t rank, model::EventRef ref) const {
  int row = rows->row_of_track(rank, ref.track);
  if (row < 0) return std::nullopt;
  const RankView& rv = layout->ranks()[rank];
  const model::Event& e = rv.rank->tracks[ref.track].events[ref.index];
  int lane = rv.index.depth[ref.track][ref.index];
  double x0 = x_of(double(e.ts_ns)), x1 = x_of(double(e.end_ns()));
  int lane_h = layout->options().lane_height;
  return QRectF(x0, row_top(row) + lane * lane_h, std::max(2.0, x1 - x0), lane_h);
}

std::optional<QRectF> TimelineFrame::flow_rect(uint32_t rank, model::EventRef ref) const {
  if (auto own = event_rect(rank, ref)) return own;
  int row = rows->row_showing_track(rank, ref.track);
  if (row < 0) return std::nullopt;
  const model::Event& e = layout->ranks()[rank].rank->tracks[ref.track].events[ref.index];
  double x0 = x_of(double(e.ts_ns)), x1 = x_of(double(e.end_ns()));
  const int lane_h = layout->options().lane_height;
  // Where the painter's summary lane is: centred on the folded row.
  return QRectF(x0, row_top(row) + (rows->rows()[size_t(row)].height - lane_h) / 2, std::max(2.0, x1 - x0), lane_h);
}

std::vector<QRectF> TimelineFrame::derived_rects(uint32_t rank, model::EventRef ref) const {
  std::vector<QRectF> out;
  const RankView& rv = layout->ranks()[rank];
  const model::Event& e = rv.rank->tracks[ref.track].events[ref.index];
  if (e.unit < 0) return out;  // derived rows hold events of a unit only
  const double x0 = x_of(double(e.ts_ns)), x1 = x_of(double(e.end_ns()));
  const int lane_h = layout->options().lane_height;
  const std::vector<Row>& arranged = rows->rows();
  for (size_t i = 0; i < arranged.size(); ++i) {
    if (arranged[i].kind != RowKind::Derived || arranged[i].rank != rank) continue;
    const DerivedRow& d = rv.derived[size_t(arranged[i].item)];
    if (auto p = d.position_of(*rv.rank, ref))
      out.emplace_back(x0, row_top(int(i)) + d.depth[*p] * lane_h, std::max(2.0, x1 - x0), lane_h);
  }
  return out;
}

}  // namespace shardscope::viewer
