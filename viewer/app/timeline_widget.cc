#include "viewer/app/timeline_widget.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <utility>
#include <unordered_map>

#include "model/saturating.h"
#include "viewer/model/counter_track.h"
#include "viewer/model/summary_lane.h"

namespace shardscope::viewer {

QString format_ns(double ns) {
  double a = std::fabs(ns);
  if (a >= 1e9) return QString::number(ns / 1e9, 'f', 3) + " s";
  if (a >= 1e6) return QString::number(ns / 1e6, 'f', 3) + " ms";
  if (a >= 1e3) return QString::number(ns / 1e3, 'f', 1) + QString::fromUtf8(" µs");
  return QString::number(ns, 'f', 0) + " ns";
}

namespace {
// A tick's label with as many decimals as the tick step needs, in the step's unit ("120 ms", "1.5 s").
QString tick_label(double ns, double step) {
  double unit = step >= 1e9 ? 1e9 : step >= 1e6 ? 1e6 : step >= 1e3 ? 1e3 : 1;
  const char* name = unit == 1e9 ? " s" : unit == 1e6 ? " ms" : unit == 1e3 ? " µs" : " ns";
  int decimals = std::max(0, int(-std::floor(std::log10(step / unit) + 1e-9)));
  return QString::number(ns / unit, 'f', decimals) + QString::fromUtf8(name);
}

QColor qcolour(Rgb c) { return QColor::fromRgb(QRgb(0xFF000000u | c)); }
}  // namespace

TimelineWidget::TimelineWidget(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);  // the cursor readout follows the mouse without a button held
  setMinimumSize(400, 200);
  setAutoFillBackground(false);
  vbar_ = new QScrollBar(Qt::Vertical, this);
  vbar_->setObjectName("rowScrollBar");
  vbar_->setRange(0, 0);
  connect(vbar_, &QScrollBar::valueChanged, this, [this](int v) {
    if (v == y_scroll_) return;
    y_scroll_ = v;
    update();
  });
}

int TimelineWidget::plotWidth() const { return std::max(1, width() - label_width_ - vbar_->sizeHint().width()); }

void TimelineWidget::setTimeline(const TimelineLayout* layout) {
  layout_ = layout;
  selection_.reset();
  range_.reset();
  y_scroll_ = 0;
  highlights_ = nullptr;
  arrangement_ = layout_ ? RowArrangement(*layout_) : RowArrangement();
  label_width_ = kLabelWidth;
  vbar_->setGeometry(width() - vbar_->sizeHint().width(), kRulerHeight, vbar_->sizeHint().width(),
                     height() - kRulerHeight);
  updateScrollBar();
  if (layout_)
    vp_ = Viewport::fit(layout_->start_ns(), std::max(layout_->end_ns(), model::sat_add(layout_->start_ns(), 1)),
                        plotWidth());
  changed();
}

void TimelineWidget::clampView() {
  if (layout_) vp_.clamp_to(layout_->start_ns(), std::max(layout_->end_ns(), model::sat_add(layout_->start_ns(), 1)));
}

void TimelineWidget::changed() {
  clampView();
  update();
  emit viewportChanged();
}

void TimelineWidget::setViewport(const Viewport& vp) {
  vp_ = vp;
  vp_.width_px = plotWidth();
  changed();
}

void TimelineWidget::setHighlights(const SearchResult* result) {
  highlights_ = result;
  update();
}

void TimelineWidget::resizeEvent(QResizeEvent*) {
  vbar_->setGeometry(width() - vbar_->sizeHint().width(), kRulerHeight, vbar_->sizeHint().width(),
                     height() - kRulerHeight);
  updateScrollBar();
  // Keep the time span across a resize: the same window, more or fewer pixels.
  double span = vp_.ns_per_px * vp_.width_px;
  vp_.width_px = plotWidth();
  vp_.ns_per_px = span / vp_.width_px;
  clampView();
  emit viewportChanged();
}

void TimelineWidget::zoomBy(double factor, double x) {
  vp_.zoom_around(x, factor);
  changed();
}

void TimelineWidget::panBy(double px) {
  vp_.pan_px(px);
  changed();
}

void TimelineWidget::scrollBy(int dy) {
  if (!layout_) return;
  int max_scroll = std::max(0, arrangement_.height() - (height() - kRulerHeight));
  y_scroll_ = std::clamp(y_scroll_ + dy, 0, max_scroll);
  QSignalBlocker block(vbar_);
  vbar_->setValue(y_scroll_);
  update();
}

void TimelineWidget::select(const std::optional<Selection>& s) {
  selection_ = s;
  update();
}

void TimelineWidget::zoomTo(int64_t lo, int64_t hi, uint32_t rank, uint32_t track) {
  // Saturating: an event's times may sit at the int64 bounds.
  int64_t margin = std::max<int64_t>(1, model::sat_sub(hi, lo) / 10);
  vp_ = Viewport::fit(model::sat_sub(lo, margin), model::sat_add(hi, margin), plotWidth());
  if (layout_) {
    int row = arrangement_.row_of_track(rank, track);
    if (row < 0 && layout_->row_of_track(rank, track) >= 0) {
      // The track is folded, hidden or filtered out: a jump to it shows it.
      // Not saved as the run's arrangement: a jump is a look, not a choice of rows.
      arrangement_.reveal(rank, track);
      arranged(false);
      row = arrangement_.row_of_track(rank, track);
    }
    if (row >= 0 && size_t(row) >= arrangement_.pinned_count()) {
      const Row& r = arrangement_.rows()[size_t(row)];
      int view_h = height() - kRulerHeight;
      if (r.y < y_scroll_ + arrangement_.pinned_height() || r.y + r.height > y_scroll_ + view_h)
        y_scroll_ = std::max(0, r.y - arrangement_.pinned_height() - view_h / 3);
      updateScrollBar();
    }
  }
  changed();
}

void TimelineWidget::zoomToSelection() {
  // The measured range if there is one, else the selected event; the row's scroll stays.
  if (range_ && range_->second > range_->first) {
    vp_ = Viewport::fit(range_->first, range_->second, plotWidth());
  } else if (selection_ && layout_) {
    const model::Event& e =
        layout_->ranks()[selection_->rank].rank->tracks[selection_->event.track].events[selection_->event.index];
    int64_t margin = std::max<int64_t>(1, e.dur_ns / 10);
    vp_ = Viewport::fit(e.ts_ns - margin, e.end_ns() + margin, plotWidth());
  } else {
    return;
  }
  changed();
}

void TimelineWidget::zoomToAll() {
  if (!layout_) return;
  vp_ = Viewport::fit(layout_->start_ns(), std::max(layout_->end_ns(), model::sat_add(layout_->start_ns(), 1)),
                      plotWidth());
  changed();
}

void TimelineWidget::clearRange() {
  if (!range_) return;
  range_.reset();
  update();
  emit rangeCleared();
}

void TimelineWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), QColor(0xFA, 0xFA, 0xFA));
  if (!layout_) {
    p.setPen(Qt::darkGray);
    p.drawText(rect(), Qt::AlignCenter, tr("Open a run directory or trace files (File > Open, or drop them here)"));
    return;
  }
  paintRows(p);
  paintHighlights(p);
  paintSelection(p);
  paintRuler(p);
}

void TimelineWidget::paintRuler(QPainter& p) {
  p.fillRect(QRect(0, 0, width(), kRulerHeight), QColor(0xEE, 0xEE, 0xEE));
  p.setPen(QColor(0x44, 0x44, 0x44));
  p.drawText(QRect(4, 0, label_width_ - 8, kRulerHeight), Qt::AlignVCenter | Qt::AlignLeft,
             format_ns(vp_.ns_per_px * vp_.width_px));
  // A tick every 1, 2 or 5 × 10^k ns, at least 100 px apart; labels relative to the trace's start.
  double raw = vp_.ns_per_px * 100;
  double pow10 = std::pow(10.0, std::floor(std::log10(raw)));
  double step = raw / pow10 <= 1 ? pow10 : raw / pow10 <= 2 ? 2 * pow10 : raw / pow10 <= 5 ? 5 * pow10 : 10 * pow10;
  double origin = double(layout_->start_ns());
  double first = std::ceil((vp_.start_ns - origin) / step) * step + origin;
  for (double t = first; t < vp_.end_ns(); t += step) {
    int x = label_width_ + int(std::lround(vp_.x_of(t)));
    p.drawLine(x, kRulerHeight - 6, x, kRulerHeight);
    p.drawText(x + 3, kRulerHeight - 8, tick_label(t - origin, step));
  }
  p.drawLine(0, kRulerHeight - 1, width(), kRulerHeight - 1);
}

void TimelineWidget::paintRows(QPainter& p) {
  // The scrolling rows first, clipped below the pinned ones; then the pinned rows over them.
  const size_t pinned = arrangement_.pinned_count(), n = arrangement_.rows().size();
  const int pinned_bottom = kRulerHeight + arrangement_.pinned_height();
  paintRowRange(p, pinned, n, y_scroll_, pinned_bottom);
  paintRowRange(p, 0, pinned, 0, kRulerHeight);
  // The label column, drawn last so marks never cover it.
  p.fillRect(QRect(0, kRulerHeight, label_width_, height() - kRulerHeight), QColor(0xF0, 0xF0, 0xF0));
  paintLabels(p, pinned, n, y_scroll_, pinned_bottom);
  paintLabels(p, 0, pinned, 0, kRulerHeight);
  if (pinned) {
    p.setPen(QColor(0x70, 0x70, 0x70));
    p.drawLine(0, pinned_bottom - 1, width(), pinned_bottom - 1);
  }
  p.setPen(QColor(0xC0, 0xC0, 0xC0));
  p.drawLine(label_width_ - 1, kRulerHeight, label_width_ - 1, height());
  // While a label is dragged: where it would land, a line over the row under the cursor.
  if (label_drag_ == LabelDrag::Reorder) {
    if (int to = rowAtPos(last_); to >= 0 && to != label_row_) {
      const int y = to < label_row_ ? rowTop(to) : rowTop(to) + arrangement_.rows()[size_t(to)].height;
      p.setPen(QPen(QColor(0x33, 0x66, 0xCC), 2));
      p.drawLine(0, y, width(), y);
    }
  }
}

void TimelineWidget::paintRowRange(QPainter& p, size_t first, size_t last, int scroll, int clip_top) {
  const int top = clip_top, bottom = height();
  if (first >= last || top >= bottom) return;
  const int lane_h = layout_->options().lane_height;
  const std::vector<Row>& rows = arrangement_.rows();
  // Rectangles are gathered per colour over the whole frame and drawn with one drawRects call per colour.
  std::unordered_map<Rgb, std::vector<QRectF>> by_colour, merged_by_colour;
  struct Label {
    QRectF r;
    uint32_t rank, track, event;
  };
  std::vector<Label> labels;
  std::vector<uint32_t> tracks, derived;
  p.save();
  p.setClipRect(QRect(label_width_, top, plotWidth(), bottom - top));
  for (size_t i = first; i < last; ++i) {
    const Row& row = rows[i];
    int y = kRulerHeight + row.y - scroll;
    if (y + row.height < top) continue;
    if (y > bottom) break;
    if (row.kind == RowKind::RankHeader || row.kind == RowKind::Group) {
      const bool folded = arrangement_.collapsed(row);
      p.fillRect(QRect(label_width_, y, plotWidth(), row.height),
                 row.kind == RowKind::RankHeader ? QColor(0xE4, 0xE8, 0xF0) : QColor(0xF2, 0xF4, 0xF7));
      if (!folded) continue;
      // A folded rank or group: one summary lane of its tracks, the dominant colour per pixel column.
      const RankView& rv = layout_->ranks()[row.rank];
      tracks.clear();
      derived.clear();
      // A rank's summary leaves its derived rows out: their events are already on its tracks.
      for (uint32_t m : arrangement_.members(row))
        if (const Row& src = layout_->rows()[m]; src.kind == RowKind::Track) tracks.push_back(uint32_t(src.item));
        else if (src.kind == RowKind::Derived && row.kind == RowKind::Group)
          derived.push_back(uint32_t(src.item));
      marks_.clear();
      summary_marks(rv, tracks, vp_, marks_, derived);
      for (const Mark& m : marks_)
        by_colour[m.colour].push_back(
            QRectF(label_width_ + m.x0, y + (row.height - lane_h) / 2 + 1, m.x1 - m.x0, lane_h - 2));
      continue;
    }
    if (row.kind == RowKind::Counter) {
      paintCounter(p, row, y);
      continue;
    }
    marks_.clear();
    layout_->row_marks(row, vp_, marks_);  // a track's, or a derived row's (FSDP units)
    for (const Mark& m : marks_) {
      QRectF r(label_width_ + m.x0, y + m.lane * lane_h + 1, std::max(1.0f, m.x1 - m.x0), lane_h - 2);
      (m.count > 1 ? merged_by_colour : by_colour)[m.colour].push_back(r);
      if (m.count == 1 && r.width() > 40) {
        const model::EventRef ev = layout_->row_event(row, m.event);
        labels.push_back({r, row.rank, ev.track, ev.index});
      }
    }
  }
  p.setPen(Qt::NoPen);
  for (auto& [c, rects] : by_colour) {
    p.setBrush(qcolour(c));
    p.drawRects(rects.data(), int(rects.size()));
  }
  // Merged runs: the same colour, lighter, so a run of many tiny events does not read as one long one.
  for (auto& [c, rects] : merged_by_colour) {
    p.setBrush(qcolour(c).lighter(130));
    p.drawRects(rects.data(), int(rects.size()));
  }
  p.setPen(Qt::black);
  QFontMetrics fm(font());
  for (const Label& l : labels) {
    const RankView& rv = layout_->ranks()[l.rank];
    QString name = QString::fromUtf8(rv.rank->str(rv.rank->tracks[l.track].events[l.event].name));
    QRectF text = l.r.adjusted(3, 0, -2, 0).intersected(QRectF(label_width_, top, plotWidth(), bottom - top));
    p.drawText(text, Qt::AlignVCenter | Qt::AlignLeft, fm.elidedText(name, Qt::ElideRight, int(text.width())));
  }
  p.restore();
}

void TimelineWidget::paintCounter(QPainter& p, const Row& row, int y) {
  const model::CounterSeries& series = layout_->ranks()[row.rank].rank->counters[size_t(row.item)];
  if (series.samples.empty()) return;
  const CounterAxis axis = counter_axis(series);
  // An area chart: per pixel column the largest value that holds in it (a step function between samples),
  // from the axis's bottom to its top.
  QPolygonF area;
  area.reserve(2 * vp_.width_px + 2);
  double base = y + row.height;
  area << QPointF(label_width_, base);
  for (int x = 0; x < vp_.width_px; ++x) {
    double lo = vp_.ns_at(x), hi = vp_.ns_at(x + 1);
    double v = counter_value_at(series, lo).value_or(axis.min);
    auto it = std::lower_bound(series.samples.begin(), series.samples.end(), lo,
                               [](const model::CounterSample& s, double t) { return double(s.ts_ns) < t; });
    for (int n = 0; it != series.samples.end() && double(it->ts_ns) < hi && n < 64; ++it, ++n)
      v = std::max(v, it->value);
    double h = (row.height - 2) * (v - axis.min) / (axis.max - axis.min);
    area << QPointF(label_width_ + x, base - h) << QPointF(label_width_ + x + 1, base - h);
  }
  area << QPointF(label_width_ + vp_.width_px, base);
  p.setPen(Qt::NoPen);
  p.setBrush(QColor(0x56, 0xB4, 0xE9, 160));
  p.drawPolygon(area);
  // The y axis at the plot's left edge: its top and bottom in the counter's unit, on a pale backing so the
  // chart under them does not hide them.
  const CounterUnit unit = counter_unit(series.name);
  QFont small = font();
  small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.8));
  p.setFont(small);
  QFontMetrics fm(small);
  auto label = [&](const QString& text, int top) {
    QRect r(label_width_ + 2, top, fm.horizontalAdvance(text) + 4, fm.height());
    p.fillRect(r, QColor(0xFA, 0xFA, 0xFA, 200));
    p.setPen(QColor(0x30, 0x30, 0x30));
    p.drawText(r, Qt::AlignCenter, text);
  };
  label(QString::fromStdString(format_counter(axis.max, unit)), y);
  label(QString::fromStdString(format_counter(axis.min, unit)), y + row.height - fm.height());
  p.setPen(QColor(0x80, 0x80, 0x80));
  p.drawLine(label_width_, y, label_width_, y + row.height);
  p.setFont(font());
}

std::optional<QRectF> TimelineWidget::eventRect(uint32_t rank, model::EventRef ref) const {
  int row = arrangement_.row_of_track(rank, ref.track);
  if (row < 0) return std::nullopt;
  const RankView& rv = layout_->ranks()[rank];
  const model::Event& e = rv.rank->tracks[ref.track].events[ref.index];
  int lane = rv.index.depth[ref.track][ref.index];
  double x0 = label_width_ + vp_.x_of(double(e.ts_ns)), x1 = label_width_ + vp_.x_of(double(e.end_ns()));
  int lane_h = layout_->options().lane_height;
  return QRectF(x0, rowTop(row) + lane * lane_h, std::max(2.0, x1 - x0), lane_h);
}

std::vector<QRectF> TimelineWidget::derivedRects(uint32_t rank, model::EventRef ref) const {
  std::vector<QRectF> out;
  const RankView& rv = layout_->ranks()[rank];
  const model::Event& e = rv.rank->tracks[ref.track].events[ref.index];
  if (e.unit < 0) return out;  // derived rows hold events of a unit only
  const double x0 = label_width_ + vp_.x_of(double(e.ts_ns)), x1 = label_width_ + vp_.x_of(double(e.end_ns()));
  const int lane_h = layout_->options().lane_height;
  const std::vector<Row>& rows = arrangement_.rows();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].kind != RowKind::Derived || rows[i].rank != rank) continue;
    const DerivedRow& d = rv.derived[size_t(rows[i].item)];
    if (auto p = d.position_of(*rv.rank, ref))
      out.emplace_back(x0, rowTop(int(i)) + d.depth[*p] * lane_h, std::max(2.0, x1 - x0), lane_h);
  }
  return out;
}

void TimelineWidget::paintHighlights(QPainter& p) {
  if (!highlights_ || highlights_->hits.empty()) return;
  p.save();
  p.setClipRect(QRect(label_width_, kRulerHeight, plotWidth(), height() - kRulerHeight));
  p.setPen(QPen(QColor(0x00, 0x00, 0x00), 1.5, Qt::DashLine));
  p.setBrush(Qt::NoBrush);
  // Outlines cost a rectangle each: past a few thousand in view they would hide the marks anyway. The
  // candidates run from the latest start back, so one long hit (a step) does not make every frame walk all
  // hits before the window.
  constexpr size_t kMaxOutlines = 4000, kMaxCandidates = 20000;
  // A hit narrower than a few pixels gets a thin bar along its lane's top instead of an outline: dashed
  // outlines a pixel apart (a common name zoomed out) merged into black blobs that hid the marks under them.
  constexpr double kOutlineMinPx = 4;
  std::vector<QRectF> bars;
  auto [first, last] = hits_near(*highlights_, vp_.start_ns, vp_.end_ns());
  size_t drawn = 0;
  for (size_t i = last, seen = 0; i > first && drawn < kMaxOutlines && seen < kMaxCandidates; ++seen) {
    const SearchHit& h = highlights_->hits[--i];
    if (auto r = eventRect(h.rank, h.event);
        r && r->right() >= label_width_ && r->bottom() >= kRulerHeight && r->top() <= height()) {
      if (r->width() >= kOutlineMinPx) p.drawRect(*r);
      else
        bars.emplace_back(r->left(), r->top(), r->width(), 2.0);
      ++drawn;
    }
  }
  p.setPen(Qt::NoPen);
  p.setBrush(QColor(0x20, 0x20, 0x20));
  p.drawRects(bars.data(), int(bars.size()));
  p.restore();
}

void TimelineWidget::paintSelection(QPainter& p) {
  p.save();
  p.setClipRect(QRect(label_width_, kRulerHeight, plotWidth(), height() - kRulerHeight));
  if (range_) {
    double x0 = label_width_ + vp_.x_of(double(range_->first)), x1 = label_width_ + vp_.x_of(double(range_->second));
    p.fillRect(QRectF(x0, kRulerHeight, x1 - x0, height()), QColor(0x33, 0x66, 0xCC, 40));
  }
  if (selection_) {
    // Where a derived row (an FSDP unit's) shows the event too: outlined there as well.
    p.setPen(QPen(Qt::black, 2));
    p.setBrush(Qt::NoBrush);
    for (const QRectF& r : derivedRects(selection_->rank, selection_->event)) p.drawRect(r);
    if (auto r = eventRect(selection_->rank, selection_->event)) {
      p.setPen(QPen(Qt::black, 2));
      p.setBrush(Qt::NoBrush);
      p.drawRect(*r);
      // The launch → kernel arrow: from the host call that issued this device event.
      const RankView& rv = layout_->ranks()[selection_->rank];
      if (const model::LaunchLink* l = rv.index.launch_of(selection_->event)) {
        if (auto from = eventRect(selection_->rank, l->launch)) {
          QPointF a(from->left(), from->bottom()), b(r->left(), r->top());
          p.setPen(QPen(QColor(0xCC, 0x00, 0x00), 1.5));
          p.drawLine(a, b);
          QLineF line(b, a);
          QLineF h1 = line, h2 = line;
          h1.setLength(8), h2.setLength(8);
          h1.setAngle(line.angle() + 25), h2.setAngle(line.angle() - 25);
          p.drawLine(h1), p.drawLine(h2);
        }
      }
    }
  }
  p.restore();
}

void TimelineWidget::wheelEvent(QWheelEvent* e) {
  double steps = e->angleDelta().y() / 120.0;
  if (e->modifiers() & Qt::ShiftModifier) {
    scrollBy(int(-steps * 40));
  } else {
    zoomBy(std::pow(0.8, steps), e->position().x() - label_width_);
  }
  e->accept();
}

void TimelineWidget::keyPressEvent(QKeyEvent* e) {
  switch (e->key()) {
    case Qt::Key_W: zoomBy(0.8, plotWidth() / 2.0); break;
    case Qt::Key_S: zoomBy(1.25, plotWidth() / 2.0); break;
    case Qt::Key_A: panBy(-plotWidth() / 10.0); break;
    case Qt::Key_D: panBy(plotWidth() / 10.0); break;
    case Qt::Key_F: zoomToSelection(); break;
    case Qt::Key_0: zoomToAll(); break;
    case Qt::Key_Escape:
      if (!range_) {
        QWidget::keyPressEvent(e);
        return;
      }
      clearRange();
      break;
    default: QWidget::keyPressEvent(e); return;
  }
  e->accept();
}

void TimelineWidget::mousePressEvent(QMouseEvent* e) {
  press_ = last_ = e->position().toPoint();
  label_drag_ = LabelDrag::None;
  if (e->button() == Qt::RightButton) return;  // the context menu
  if (layout_ && press_.y() >= kRulerHeight && std::abs(press_.x() - label_width_) <= 3) {
    label_drag_ = LabelDrag::Resize;  // the label column's edge
    return;
  }
  if (layout_ && press_.x() < label_width_) {
    label_drag_ = LabelDrag::Press;
    label_row_ = rowAtPos(press_);
    return;
  }
  pressed_ = true;
  dragging_ = false;
  selecting_ = (e->modifiers() & Qt::ShiftModifier) && layout_;
  if (selecting_) {
    int row = rowAtPos(press_);
    range_rank_ = row >= 0 ? int(arrangement_.rows()[size_t(row)].rank) : -1;
  }
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* e) {
  QPoint pos = e->position().toPoint();
  emit cursorMoved(cursorTextAt(pos));
  if (label_drag_ == LabelDrag::Resize) {
    setLabelWidth(pos.x());
    return;
  }
  if (label_drag_ == LabelDrag::Press && (pos - press_).manhattanLength() > 3 && label_row_ >= 0) {
    const RowKind k = arrangement_.rows()[size_t(label_row_)].kind;
    if (is_leaf(k)) label_drag_ = LabelDrag::Reorder;
  }
  if (label_drag_ != LabelDrag::None) {
    setCursor(label_drag_ == LabelDrag::Reorder ? Qt::ClosedHandCursor : Qt::ArrowCursor);
    last_ = pos;
    if (label_drag_ == LabelDrag::Reorder) update();
    return;
  }
  if (!pressed_) {  // hovering: only the readout, and the column edge's cursor
    bool edge = layout_ && pos.y() >= kRulerHeight && std::abs(pos.x() - label_width_) <= 3;
    setCursor(edge ? Qt::SplitHCursor : Qt::ArrowCursor);
    return;
  }
  if ((pos - press_).manhattanLength() > 3) dragging_ = true;
  if (selecting_) {
    double a = vp_.ns_at(press_.x() - label_width_), b = vp_.ns_at(pos.x() - label_width_);
    range_ = {Viewport::to_ns(std::min(a, b)), Viewport::to_ns(std::max(a, b))};
    update();
  } else if (dragging_) {
    panBy(last_.x() - pos.x());
    scrollBy(last_.y() - pos.y());
  }
  last_ = pos;
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent* e) {
  const QPoint pos = e->position().toPoint();
  const LabelDrag drag = std::exchange(label_drag_, LabelDrag::None);
  if (drag != LabelDrag::None) {
    unsetCursor();
    if (drag == LabelDrag::Resize) {
      emit arrangementChanged();
    } else if (drag == LabelDrag::Reorder) {
      if (arrangement_.move(label_row_, rowAtPos(pos))) arranged(true);
    } else if (e->button() == Qt::LeftButton && label_row_ >= 0 && label_row_ == rowAtPos(pos)) {
      const Row& row = arrangement_.rows()[size_t(label_row_)];
      if (row.kind == RowKind::RankHeader || row.kind == RowKind::Group) {
        arrangement_.toggle(row);
        arranged(true);
      }
    }
    label_row_ = -1;
    return;
  }
  if (!pressed_) return;
  if (selecting_ && range_ && range_rank_ >= 0)
    emit rangeSelected(uint32_t(range_rank_), range_->first, range_->second);
  else if (!dragging_)
    clickAt(pos);
  selecting_ = dragging_ = pressed_ = false;
}

void TimelineWidget::clickAt(QPoint pos) {
  if (!layout_ || pos.x() < label_width_ || pos.y() < kRulerHeight) return;
  std::optional<Selection> hit = eventAt(pos);
  select(hit);
  if (hit) emit eventSelected(hit->rank, hit->event.track, hit->event.index);
  else
    emit selectionCleared();
}

}  // namespace shardscope::viewer

namespace shardscope::viewer {

std::optional<Selection> TimelineWidget::eventAt(QPoint pos) const {
  if (!layout_ || pos.x() < label_width_ || pos.y() < kRulerHeight) return std::nullopt;
  int lane = 0;
  int row = rowAtPos(pos, &lane);
  if (row < 0 || !has_lanes(arrangement_.rows()[size_t(row)].kind) || lane < 0) return std::nullopt;
  const Row& r = arrangement_.rows()[size_t(row)];
  // A derived row's hit is the real event (on its own track), so the selection is the same either way.
  auto hit = layout_->row_hit(r, uint16_t(lane), vp_.ns_at(pos.x() - label_width_), 3 * vp_.ns_per_px);
  if (!hit) return std::nullopt;
  return Selection{r.rank, *hit};
}

QString TimelineWidget::cursorTextAt(QPoint pos) const {
  if (!layout_ || pos.x() < label_width_) return {};
  QString text = tr("t = %1").arg(format_ns(vp_.ns_at(pos.x() - label_width_) - double(layout_->start_ns())));
  int row = rowAtPos(pos);
  if (row >= 0) {
    const Row& r = arrangement_.rows()[size_t(row)];
    text += tr("  ·  rank %1").arg(layout_->ranks()[r.rank].rank->rank);
    if (r.kind != RowKind::RankHeader) text += "  ·  " + QString::fromStdString(r.label);
  }
  return text;
}

QString TimelineWidget::toolTipAt(QPoint pos) const {
  if (!layout_ || pos.y() < kRulerHeight) return {};
  int lane = 0;
  int row = rowAtPos(pos, &lane);
  if (row < 0) return {};
  const Row& r = arrangement_.rows()[size_t(row)];
  QString folded_note;
  if (has_lanes(r.kind) && r.folded > 0 && lane == r.lanes - 1)
    folded_note = tr("%1 overlapping %2 from %3 deeper %4 drawn in this lane (a track shows at most %5 lanes)")
                      .arg(r.folded)
                      .arg(r.folded == 1 ? tr("slice") : tr("slices"))
                      .arg(r.folded_lanes)
                      .arg(r.folded_lanes == 1 ? tr("lane") : tr("lanes"))
                      .arg(kMaxLanes);
  if (pos.x() < label_width_) {  // the full name of a label cut short, and what a fold holds
    QString tip = QString::fromStdString(r.label).toHtmlEscaped();
    if (r.kind == RowKind::RankHeader || r.kind == RowKind::Group)
      tip += "<br>" + (arrangement_.collapsed(r) ? tr("folded: click to expand") : tr("click to fold into one lane"));
    if (!folded_note.isEmpty()) tip += "<br>" + folded_note;
    return tip;
  }
  if (r.kind == RowKind::RankHeader || r.kind == RowKind::Group) {
    if (!arrangement_.collapsed(r)) return {};
    return tr("<b>%1</b><br>folded: busy where any of its rows is, in the colour covering most of each pixel")
        .arg(QString::fromStdString(r.label).toHtmlEscaped());
  }
  const model::Rank& rank = *layout_->ranks()[r.rank].rank;
  const double t = vp_.ns_at(pos.x() - label_width_);
  if (r.kind == RowKind::Counter) {
    const model::CounterSeries& series = rank.counters[size_t(r.item)];
    const CounterUnit unit = counter_unit(series.name);
    std::optional<double> v = counter_value_at(series, t);
    QString value = v ? QString::fromStdString(format_counter(*v, unit)) : tr("no sample yet");
    return tr("<b>%1</b><br>%2 (%3) at %4")
        .arg(QString::fromStdString(series.name).toHtmlEscaped(), value, QString::fromUtf8(to_string(unit).data()),
             format_ns(t - double(layout_->start_ns())));
  }
  std::optional<Selection> hit = eventAt(pos);
  if (!hit) return {};
  const model::Event& e = rank.tracks[hit->event.track].events[hit->event.index];
  // A template kernel name can run to hundreds of characters: the tooltip keeps its start and end; the
  // Event dock has the whole name.
  QString name = QString::fromUtf8(rank.str(e.name));
  if (name.size() > 120) name = name.left(80) + QStringLiteral(" … ") + name.right(36);
  QString kind = QString::fromUtf8(model::to_string(e.cls).data());
  if (e.coll != model::CollectiveKind::None) kind += " / " + QString::fromUtf8(model::to_string(e.coll).data());
  QString html = "<b>" + name.toHtmlEscaped() + "</b><br>" + tr("duration: %1").arg(format_ns(double(e.dur_ns))) +
                 "<br>" + tr("class: %1").arg(kind);
  if (e.unit >= 0) html += "<br>" + tr("unit: %1").arg(e.unit);
  if (e.step >= 0 && size_t(e.step) < rank.steps.size())
    html += "<br>" + tr("step: %1").arg(rank.steps[size_t(e.step)].number);
  if (!folded_note.isEmpty()) html += "<br>" + folded_note;
  return html;
}

bool TimelineWidget::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    QString text = toolTipAt(help->pos());
    if (text.isEmpty()) {
      QToolTip::hideText();
      e->ignore();
    } else {
      QToolTip::showText(help->globalPos(), text, this);
    }
    return true;
  }
  return QWidget::event(e);
}

void TimelineWidget::leaveEvent(QEvent* e) {
  emit cursorMoved(QString());
  QWidget::leaveEvent(e);
}

}  // namespace shardscope::viewer
