// The timeline's rows and label column; the ruler and what is drawn over the rows are in timeline_overlays.cc.
#include "viewer/app/timeline_painter.h"

#include <QPainter>

#include <algorithm>

#include "viewer/model/counter_track.h"
#include "viewer/model/summary_lane.h"

namespace shardscope::viewer {

namespace {
QColor qcolour(Rgb c) { return QColor::fromRgb(QRgb(0xFF000000u | c)); }
}  // namespace

void TimelinePainter::rows() {
  // The scrolling rows first, clipped below the pinned ones; then the pinned rows over them.
  const RowArrangement& a = *f_.rows;
  const int ruler = TimelineFrame::kRulerHeight;
  const size_t pinned = a.pinned_count(), n = a.rows().size();
  const int pinned_bottom = ruler + a.pinned_height();
  rowRange(pinned, n, f_.y_scroll, pinned_bottom);
  rowRange(0, pinned, 0, ruler);
  // The label column, drawn last so marks never cover it.
  p_.fillRect(QRect(0, ruler, f_.label_width, f_.height - ruler), QColor(0xF0, 0xF0, 0xF0));
  labels(pinned, n, f_.y_scroll, pinned_bottom);
  labels(0, pinned, 0, ruler);
  if (pinned) {
    p_.setPen(QColor(0x70, 0x70, 0x70));
    p_.drawLine(0, pinned_bottom - 1, f_.width, pinned_bottom - 1);
  }
  p_.setPen(QColor(0xC0, 0xC0, 0xC0));
  p_.drawLine(f_.label_width - 1, ruler, f_.label_width - 1, f_.height);
}

void TimelinePainter::dropLine(int y) {
  p_.setPen(QPen(QColor(0x33, 0x66, 0xCC), 2));
  p_.drawLine(0, y, f_.width, y);
}

void TimelinePainter::rowRange(size_t first, size_t last, int scroll, int clip_top) {
  const int top = clip_top, bottom = f_.height, lw = f_.label_width;
  if (first >= last || top >= bottom) return;
  const TimelineLayout& layout = *f_.layout;
  const int lane_h = layout.options().lane_height;
  const std::vector<Row>& rows = f_.rows->rows();
  // Rectangles are gathered per colour over the whole frame and drawn with one drawRects call per colour.
  ByColour by_colour, merged_by_colour;
  struct Label {
    QRectF r;
    uint32_t rank, track, event;
  };
  std::vector<Label> labels;
  p_.save();
  p_.setClipRect(QRect(lw, top, f_.plot_width, bottom - top));
  for (size_t i = first; i < last; ++i) {
    const Row& row = rows[i];
    int y = TimelineFrame::kRulerHeight + row.y - scroll;
    if (y + row.height < top) continue;
    if (y > bottom) break;
    if (row.kind == RowKind::RankHeader || row.kind == RowKind::Group) {
      p_.fillRect(QRect(lw, y, f_.plot_width, row.height),
                  row.kind == RowKind::RankHeader ? QColor(0xE4, 0xE8, 0xF0) : QColor(0xF2, 0xF4, 0xF7));
      if (f_.rows->collapsed(row)) summaryLane(row, y, by_colour);
      continue;
    }
    if (row.kind == RowKind::Counter) {
      counter(row, y);
      continue;
    }
    marks_.clear();
    layout.row_marks(row, f_.vp, marks_);  // a track's, or a derived row's (FSDP units)
    auto rect = [&](const Mark& m) {
      return QRectF(lw + m.x0, y + m.lane * lane_h + 1, std::max(1.0f, m.x1 - m.x0), lane_h - 2);
    };
    for (const Mark& m : marks_) (m.count > 1 ? merged_by_colour : by_colour)[m.colour].push_back(rect(m));
    for (size_t i : labelled_marks(marks_)) {  // none printed over another ("+N" lanes overlap)
      const model::EventRef ev = layout.row_event(row, marks_[i].event);
      labels.push_back({rect(marks_[i]), row.rank, ev.track, ev.index});
    }
  }
  p_.setPen(Qt::NoPen);
  for (auto& [c, rects] : by_colour) {
    p_.setBrush(qcolour(c));
    p_.drawRects(rects.data(), int(rects.size()));
  }
  // Merged runs: the same colour, lighter, so a run of many tiny events does not read as one long one.
  for (auto& [c, rects] : merged_by_colour) {
    p_.setBrush(qcolour(c).lighter(130));
    p_.drawRects(rects.data(), int(rects.size()));
  }
  p_.setPen(Qt::black);
  QFontMetrics fm(font_);
  for (const Label& l : labels) {
    const RankView& rv = layout.ranks()[l.rank];
    QString name = QString::fromUtf8(rv.rank->str(rv.rank->tracks[l.track].events[l.event].name));
    QRectF text = l.r.adjusted(3, 0, -2, 0).intersected(QRectF(lw, top, f_.plot_width, bottom - top));
    p_.drawText(text, Qt::AlignVCenter | Qt::AlignLeft, fm.elidedText(name, Qt::ElideRight, int(text.width())));
  }
  p_.restore();
}

void TimelinePainter::summaryLane(const Row& row, int y, ByColour& out) {
  // A folded rank or group: one summary lane of its tracks, the dominant colour per pixel column.
  const TimelineLayout& layout = *f_.layout;
  const int lane_h = layout.options().lane_height;
  tracks_.clear();
  derived_.clear();
  // A rank's summary leaves its derived rows out: their events are already on its tracks.
  for (uint32_t m : f_.rows->members(row))
    if (const Row& src = layout.rows()[m]; src.kind == RowKind::Track) tracks_.push_back(uint32_t(src.item));
    else if (src.kind == RowKind::Derived && row.kind == RowKind::Group)
      derived_.push_back(uint32_t(src.item));
  marks_.clear();
  summary_marks(layout.ranks()[row.rank], tracks_, f_.vp, marks_, derived_);
  for (const Mark& m : marks_)
    out[m.colour].push_back(QRectF(f_.label_width + m.x0, y + (row.height - lane_h) / 2 + 1, m.x1 - m.x0, lane_h - 2));
}

void TimelinePainter::counter(const Row& row, int y) {
  const model::CounterSeries& series = f_.layout->ranks()[row.rank].rank->counters[size_t(row.item)];
  if (series.samples.empty()) return;
  const CounterAxis axis = counter_axis(series);
  const Viewport& vp = f_.vp;
  const int lw = f_.label_width;
  // An area chart: per pixel column the largest value that holds in it (a step function between samples),
  // from the axis's bottom to its top.
  QPolygonF area;
  area.reserve(2 * vp.width_px + 2);
  double base = y + row.height;
  area << QPointF(lw, base);
  for (int x = 0; x < vp.width_px; ++x) {
    double lo = vp.ns_at(x), hi = vp.ns_at(x + 1);
    double v = counter_value_at(series, lo).value_or(axis.min);
    auto it = std::lower_bound(series.samples.begin(), series.samples.end(), lo,
                               [](const model::CounterSample& s, double t) { return double(s.ts_ns) < t; });
    for (int n = 0; it != series.samples.end() && double(it->ts_ns) < hi && n < 64; ++it, ++n)
      v = std::max(v, it->value);
    double h = (row.height - 2) * (v - axis.min) / (axis.max - axis.min);
    area << QPointF(lw + x, base - h) << QPointF(lw + x + 1, base - h);
  }
  area << QPointF(lw + vp.width_px, base);
  p_.setPen(Qt::NoPen);
  p_.setBrush(QColor(0x56, 0xB4, 0xE9, 160));
  p_.drawPolygon(area);
  // The y axis at the plot's left edge: its top and bottom in the counter's unit, on a pale backing so the
  // chart under them does not hide them.
  const CounterUnit unit = counter_unit(series.name);
  QFont small = font_;
  small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.8));
  p_.setFont(small);
  QFontMetrics fm(small);
  auto label = [&](const QString& text, int top) {
    QRect r(lw + 2, top, fm.horizontalAdvance(text) + 4, fm.height());
    p_.fillRect(r, QColor(0xFA, 0xFA, 0xFA, 200));
    p_.setPen(QColor(0x30, 0x30, 0x30));
    p_.drawText(r, Qt::AlignCenter, text);
  };
  label(QString::fromStdString(format_counter(axis.max, unit)), y);
  label(QString::fromStdString(format_counter(axis.min, unit)), y + row.height - fm.height());
  p_.setPen(QColor(0x80, 0x80, 0x80));
  p_.drawLine(lw, y, lw, y + row.height);
  p_.setFont(font_);
}

void TimelinePainter::labels(size_t first, size_t last, int scroll, int clip_top) {
  const RowArrangement& a = *f_.rows;
  const std::vector<Row>& rows = a.rows();
  const int lane_h = f_.layout->options().lane_height, lw = f_.label_width, height = f_.height;
  p_.save();
  p_.setClipRect(QRect(0, clip_top, lw, height - clip_top));
  QFont bold = font_;
  bold.setBold(true);
  for (size_t i = first; i < last; ++i) {
    const Row& row = rows[i];
    int y = TimelineFrame::kRulerHeight + row.y - scroll;
    if (y + row.height < clip_top) continue;
    if (y > height) break;
    const bool header = row.kind == RowKind::RankHeader || row.kind == RowKind::Group;
    p_.setFont(row.kind == RowKind::RankHeader ? bold : font_);
    p_.setPen(header ? QColor(0x10, 0x20, 0x40) : QColor(0x30, 0x30, 0x30));
    if (row.kind == RowKind::RankHeader) p_.fillRect(QRect(0, y, lw, row.height), QColor(0xD0, 0xD8, 0xE8));
    if (row.kind == RowKind::Group) p_.fillRect(QRect(0, y, lw, row.height), QColor(0xE2, 0xE6, 0xEE));
    QString text = QString::fromStdString(row.label);
    // ▸ folded, ▾ open: the label is the fold's handle.
    if (header) text = QString::fromUtf8(a.collapsed(row) ? "▸ " : "▾ ") + text;
    int indent = row.kind == RowKind::RankHeader ? 4 : row.kind == RowKind::Group ? 10 : 20;
    int right = 4;
    if (has_lanes(row.kind) && row.folded > 0) {
      // The folded lane's count, on that lane: "+N" slices deeper than the cap are drawn there.
      QString badge = QStringLiteral("+%1").arg(row.folded);
      int w = QFontMetrics(font_).horizontalAdvance(badge) + 6;
      QRect r(lw - w - 2, y + row.folded_lane() * lane_h, w, lane_h);
      p_.fillRect(r, QColor(0xFF, 0xE0, 0xA0));
      p_.drawText(r, Qt::AlignCenter, badge);
      right += w;
    }
    if (row.sync_lane) {  // the stream's sync records' lane, named where it is
      QRect r(lw - 40, y + (row.lanes - 1) * lane_h, 36, lane_h);
      p_.setPen(QColor(0x70, 0x70, 0x70));
      p_.drawText(r, Qt::AlignVCenter | Qt::AlignRight, QStringLiteral("sync"));
      p_.setPen(QColor(0x30, 0x30, 0x30));
      if (row.lanes == 1) right += 40;
    }
    const int avail = std::max(0, lw - indent - right);
    p_.drawText(QRect(indent, y, avail, std::min(row.height, 20)), Qt::AlignVCenter | Qt::AlignLeft,
                QFontMetrics(p_.font()).elidedText(text, Qt::ElideMiddle, avail));
  }
  p_.restore();
  p_.setFont(font_);
}

}  // namespace shardscope::viewer
