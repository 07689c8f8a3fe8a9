#include "viewer/app/timeline_widget.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "model/saturating.h"
#include "viewer/model/counter_track.h"

namespace shardscope::viewer {

TimelineWidget::TimelineWidget(SelectionModel* selection, QWidget* parent) : QWidget(parent), selection_(selection) {
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
  // Whoever changes the selection (a click here, a dock, the search bar), the timeline shows it.
  for (auto signal : {&SelectionModel::runChanged, &SelectionModel::eventChanged, &SelectionModel::rangeChanged,
                      &SelectionModel::highlightsChanged, &SelectionModel::marksChanged})
    connect(selection_, signal, this, qOverload<>(&QWidget::update));
  connect(selection_, &SelectionModel::eventChanged, this, [this] { range_newer_ = false; });
  connect(selection_, &SelectionModel::rangeChanged, this, [this] { range_newer_ = selection_->range().has_value(); });
  connect(selection_, &SelectionModel::jumpRequested, this,
          [this](uint32_t rank, uint32_t track, qint64 lo, qint64 hi, std::optional<model::EventRef> ev) {
            zoomTo(lo, hi, rank, track);
            if (ev) selection_->setEvent(EventSelection{rank, *ev});
          });
}

int TimelineWidget::plotWidth() const { return std::max(1, width() - label_width_ - vbar_->sizeHint().width()); }

TimelineFrame TimelineWidget::frame() const {
  return {layout_, &arrangement_, vp_, label_width_, plotWidth(), width(), height(), y_scroll_};
}

std::optional<EventSelection> TimelineWidget::selectedEvent() const {
  return ownsSelection() ? selection_->event() : std::nullopt;
}

std::optional<std::pair<int64_t, int64_t>> TimelineWidget::shownRange() const {
  if (dragged_range_) return dragged_range_;  // a Shift+drag under way shows what it would measure
  if (!ownsSelection() || !selection_->range()) return std::nullopt;
  return std::pair{selection_->range()->lo, selection_->range()->hi};
}

void TimelineWidget::setTimeline(const TimelineLayout* layout) {
  layout_ = layout;
  dragged_range_.reset();
  y_scroll_ = 0;
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
  if (layout_ && held_to_run_)
    vp_.clamp_to(layout_->start_ns(), std::max(layout_->end_ns(), model::sat_add(layout_->start_ns(), 1)));
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

void TimelineWidget::resizeEvent(QResizeEvent*) {
  vbar_->setGeometry(width() - vbar_->sizeHint().width(), kRulerHeight, vbar_->sizeHint().width(),
                     height() - kRulerHeight);
  updateScrollBar();
  // Keep the time span across a resize: the same window, more or fewer pixels.
  double span = vp_.ns_per_px * vp_.width_px;
  vp_.width_px = plotWidth();
  vp_.ns_per_px = span / vp_.width_px;
  clampView();
  emit viewportResized();
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
  const auto range = shownRange();
  const auto selected = selectedEvent();
  if (range && range->second > range->first) {
    vp_ = Viewport::fit(range->first, range->second, plotWidth());
  } else if (selected) {
    const model::Event& e =
        layout_->ranks()[selected->rank].rank->tracks[selected->event.track].events[selected->event.index];
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
  if (!shownRange()) return;
  dragged_range_.reset();
  update();
  if (ownsSelection() && selection_->range()) selection_->setRange(std::nullopt);
}

void TimelineWidget::markSelection() {
  if (!ownsSelection()) return;
  const auto& range = selection_->range();
  std::optional<EventSelection> ev = selection_->event();
  if (range && (range_newer_ || !ev)) {
    selection_->toggleMark(range->lo, range->hi);
    return;
  }
  if (!ev && hover_) ev = eventAt(*hover_);
  if (!ev) return;
  const model::Event& e = layout_->ranks()[ev->rank].rank->tracks[ev->event.track].events[ev->event.index];
  selection_->toggleMark(e.ts_ns, e.end_ns());
}

std::vector<TrackRef> TimelineWidget::rowTracks(const Row& row) const {
  std::vector<TrackRef> out;
  if (!layout_) return out;
  if (row.kind == RowKind::Track) out.push_back({row.rank, uint32_t(row.item)});
  if ((row.kind == RowKind::RankHeader || row.kind == RowKind::Group) && arrangement_.collapsed(row))
    for (uint32_t m : arrangement_.members(row))
      if (const Row& r = layout_->rows()[m]; r.kind == RowKind::Track) out.push_back({r.rank, uint32_t(r.item)});
  return out;
}

std::vector<TrackRef> TimelineWidget::tracksBetween(int y0, int y1) const {
  std::vector<TrackRef> out;
  if (!layout_) return out;
  const int top = std::max(std::min(y0, y1), kRulerHeight), bottom = std::max(y0, y1);
  const auto& rows = arrangement_.rows();
  for (size_t i = 0; i < rows.size(); ++i) {
    const int row_top = rowTop(int(i));
    if (row_top > bottom || row_top + rows[i].height <= top) continue;
    for (const TrackRef& t : rowTracks(rows[i])) out.push_back(t);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool TimelineWidget::selectAreaOverAllRows(int64_t lo, int64_t hi) {
  const auto& rows = arrangement_.rows();
  if (!ownsSelection() || rows.empty() || hi <= lo) return false;
  // Every row the arrangement shows, scrolled into view or not, each standing for its tracks as in a drag.
  std::vector<TrackRef> tracks;
  for (const Row& row : rows)
    for (const TrackRef& t : rowTracks(row)) tracks.push_back(t);
  std::sort(tracks.begin(), tracks.end());
  tracks.erase(std::unique(tracks.begin(), tracks.end()), tracks.end());
  if (tracks.empty()) return false;
  const int64_t margin = std::max<int64_t>(1, (hi - lo) / 10);
  vp_ = Viewport::fit(model::sat_sub(lo, margin), model::sat_add(hi, margin), plotWidth());
  selection_->setRange(TimeRange{rows.front().rank, lo, hi, std::move(tracks)});
  update();
  return true;
}

std::vector<QRectF> TimelineWidget::areaRects() const {
  std::vector<QRectF> out;
  if (!ownsSelection() || !selection_->range() || selection_->range()->tracks.empty() || dragged_range_) return out;
  const TimeRange& area = *selection_->range();
  const TimelineFrame f = frame();
  const double x0 = f.x_of(double(area.lo)), x1 = f.x_of(double(area.hi));
  const auto& rows = arrangement_.rows();
  for (size_t i = 0; i < rows.size(); ++i) {
    const int y = rowTop(int(i));
    if (y + rows[i].height < kRulerHeight || y > height()) continue;
    for (const TrackRef& t : rowTracks(rows[i]))
      if (std::binary_search(area.tracks.begin(), area.tracks.end(), t)) {
        out.emplace_back(x0, y, x1 - x0, rows[i].height);
        break;
      }
  }
  return out;
}

void TimelineWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), QColor(0xFA, 0xFA, 0xFA));
  if (!layout_) {
    p.setPen(Qt::darkGray);
    p.drawText(rect(), Qt::AlignCenter, tr("Open a run directory or trace files (File > Open, or drop them here)"));
    return;
  }
  const TimelineFrame f = frame();
  TimelinePainter painter(p, f, font(), marks_);
  painter.rows();
  // While a label is dragged: where it would land, a line over the row under the cursor.
  if (label_drag_ == LabelDrag::Reorder)
    if (int to = rowAtPos(last_); to >= 0 && to != label_row_)
      painter.dropLine(to < label_row_ ? rowTop(to) : rowTop(to) + arrangement_.rows()[size_t(to)].height);
  if (ownsSelection() && selection_->highlights()) painter.highlights(*selection_->highlights());
  if (auto r = shownRange()) painter.range(*r);
  painter.areaRows(areaRects());
  if (auto e = selectedEvent()) {
    painter.selection(e->rank, e->event);
    auto [launches, collective] = selectedFlows();
    painter.flows(launches, collective);
  }
  painter.ruler();
  if (ownsSelection()) painter.marks(selection_->marks());
}

std::pair<std::vector<Flow>, CollectiveFlows> TimelineWidget::selectedFlows() const {
  std::optional<EventSelection> e = selectedEvent();
  if (!e) return {};
  const RankView& rv = layout_->ranks()[e->rank];
  std::pair<std::vector<Flow>, CollectiveFlows> out{launch_flows(rv.index, e->rank, e->event), {}};
  // Only a collective has copies on other ranks: the instance table is not built for other selections.
  if (rv.rank->tracks[e->event.track].events[e->event.index].coll != model::CollectiveKind::None)
    if (const AcrossRanks* across = selection_->across()) out.second = collective_flows(*across, e->rank, e->event);
  return out;
}

std::optional<QRectF> TimelineWidget::flowRect(uint32_t rank, model::EventRef ref) const {
  return layout_ ? frame().flow_rect(rank, ref) : std::nullopt;
}

std::vector<QLineF> TimelineWidget::flowLines() const {
  std::vector<QLineF> out;
  if (!layout_) return out;
  const TimelineFrame f = frame();
  auto [launches, collective] = selectedFlows();
  for (const Flow& fl : launches)
    if (auto l = flow_line(f, fl)) out.push_back(*l);
  for (const Flow& fl : collective.links)
    if (auto l = flow_line(f, fl)) out.push_back(*l);
  return out;
}

int TimelineWidget::rowAtPos(QPoint pos, int* lane) const { return layout_ ? frame().row_at(pos, lane) : -1; }

std::optional<QRectF> TimelineWidget::eventRect(uint32_t rank, model::EventRef ref) const {
  return frame().event_rect(rank, ref);
}

std::vector<QRectF> TimelineWidget::derivedRects(uint32_t rank, model::EventRef ref) const {
  return frame().derived_rects(rank, ref);
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
    case Qt::Key_M:
      if (e->modifiers() & ~Qt::KeypadModifier) {
        QWidget::keyPressEvent(e);
        return;
      }
      markSelection();
      break;
    case Qt::Key_Escape:
      if (!shownRange()) {
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
  hover_ = pos;
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
    dragged_range_ = {Viewport::to_ns(std::min(a, b)), Viewport::to_ns(std::max(a, b))};
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
  // A Shift+drag measures on the rank it started on; one that started on no rank measures nothing.
  const auto range = shownRange();
  if (dragged_range_) update();  // the drag's range goes; the selection model's, if any, is drawn
  dragged_range_.reset();
  if (selecting_ && range && range_rank_ >= 0) {
    if (ownsSelection())
      selection_->setRange(
          TimeRange{uint32_t(range_rank_), range->first, range->second, tracksBetween(press_.y(), pos.y())});
  } else if (!dragging_) {
    clickAt(pos);
  }
  selecting_ = dragging_ = pressed_ = false;
}

void TimelineWidget::clickAt(QPoint pos) {
  if (!ownsSelection() || pos.x() < label_width_ || pos.y() < kRulerHeight) return;
  std::optional<EventSelection> hit = eventAt(pos);
  selection_->setEvent(hit);
  if (!hit) return;
  // A collective clicked: its instance on every rank too (the Ranks dock).
  const model::Event& e = layout_->ranks()[hit->rank].rank->tracks[hit->event.track].events[hit->event.index];
  if (e.cls == model::IntervalClass::Communication && e.ph == 'X') selection_->showAcrossRanks(hit->rank, hit->event);
}

}  // namespace shardscope::viewer

namespace shardscope::viewer {

std::optional<EventSelection> TimelineWidget::eventAt(QPoint pos) const {
  if (!layout_ || pos.x() < label_width_ || pos.y() < kRulerHeight) return std::nullopt;
  int lane = 0;
  int row = rowAtPos(pos, &lane);
  if (row < 0 || !has_lanes(arrangement_.rows()[size_t(row)].kind) || lane < 0) return std::nullopt;
  const Row& r = arrangement_.rows()[size_t(row)];
  // A derived row's hit is the real event (on its own track), so the selection is the same either way.
  auto hit = layout_->row_hit(r, uint16_t(lane), vp_.ns_at(pos.x() - label_width_), 3 * vp_.ns_per_px);
  if (!hit) return std::nullopt;
  return EventSelection{r.rank, *hit};
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
  if (has_lanes(r.kind) && r.folded > 0 && lane == r.folded_lane())
    folded_note = tr("%1 overlapping %2 from %3 deeper %4 drawn in this lane (a track shows at most %5 lanes)")
                      .arg(r.folded)
                      .arg(r.folded == 1 ? tr("slice") : tr("slices"))
                      .arg(r.folded_lanes)
                      .arg(r.folded_lanes == 1 ? tr("lane") : tr("lanes"))
                      .arg(kMaxLanes);
  if (r.kind == RowKind::Track && r.sync_lane && lane == r.lanes - 1)
    folded_note =
        tr("this lane: the stream's sync records (stream and event synchronizes, stream waits), apart from "
           "its kernels");
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
  std::optional<EventSelection> hit = eventAt(pos);
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
  hover_.reset();
  emit cursorMoved(QString());
  QWidget::leaveEvent(e);
}

}  // namespace shardscope::viewer
