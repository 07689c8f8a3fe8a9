#include "viewer/app/docks/ranks_dock.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "viewer/app/selection_model.h"
#include "viewer/app/timeline_widget.h"
#include "viewer/model/timeline_layout.h"

namespace shardscope::viewer {

namespace {
QColor rgb(Rgb c) { return QColor(int(c >> 16) & 0xFF, int(c >> 8) & 0xFF, int(c) & 0xFF); }
const QColor kLast(Qt::red), kLatePeer(Qt::magenta);
// The step picker's item while aligned on an instance (steps carry their number).
const QString kInstanceItem = QStringLiteral("instance");

// Worst first, so the late rank of a thousand is the first row: on an instance the last arrival first, then
// by arrival after the earliest; on a step the longest step first. Ranks without the step or instance last.
void worst_first(std::vector<RankRow>& rows, const model::Trace& trace, bool on_instance, int64_t step) {
  auto lateness = [&](const RankRow& r) -> int64_t {
    if (!r.origin_ns) return INT64_MIN;
    const model::Rank& rank = trace.ranks[r.rank];
    if (on_instance)
      return r.instance ? rank.tracks[r.instance->track].events[r.instance->index].ts_ns - *r.origin_ns : INT64_MIN;
    for (const model::Step& s : rank.steps)
      if (s.number == step) return s.end_ns - s.start_ns;
    return INT64_MIN;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const RankRow& a, const RankRow& b) {
    if (a.last != b.last) return a.last;
    return lateness(a) > lateness(b);
  });
}
}  // namespace

RanksView::RanksView(QWidget* parent) : QWidget(parent) {
  setObjectName("ranksView");
  setMinimumHeight(80);
  setMouseTracking(false);
}

void RanksView::setRows(const TimelineLayout* layout, const AcrossRanks* across, const std::vector<RankRow>* rows) {
  layout_ = layout;
  across_ = across;
  rows_ = rows;
  // As tall as its rows: the dock's scroll area scrolls them, its own minimum stays a few rows.
  int h = kRuler;
  if (layout_ && rows_)
    for (const RankRow& r : *rows_) h += rowHeight(r);
  setMinimumHeight(std::max(80, h));
  update();
}

void RanksView::fit(double lo_ns, double hi_ns) {
  vp_.width_px = std::max(1, width() - kLabelWidth);
  vp_.start_ns = lo_ns;
  vp_.ns_per_px = std::max(1e-3, (hi_ns - lo_ns) / vp_.width_px);
  update();
}

void RanksView::resizeEvent(QResizeEvent*) { vp_.width_px = std::max(1, width() - kLabelWidth); }

int RanksView::rowHeight(const RankRow& row) const {
  int lanes = 0;
  for (uint32_t t : row.tracks) lanes += int(std::max<size_t>(1, layout_->ranks()[row.rank].tracks[t].lanes.size()));
  return std::max(1, lanes) * kLaneHeight + 4;
}

std::optional<QRectF> RanksView::instanceRect(size_t i) const {
  if (!layout_ || !rows_ || i >= rows_->size()) return std::nullopt;
  int y = kRuler;
  for (size_t k = 0; k < i; ++k) y += rowHeight((*rows_)[k]);
  const RankRow& row = (*rows_)[i];
  if (!row.instance || !row.origin_ns) return std::nullopt;
  const model::Event& e = layout_->ranks()[row.rank].rank->tracks[row.instance->track].events[row.instance->index];
  int lane_y = y + 2;
  for (uint32_t t : row.tracks) {
    if (t == row.instance->track) {
      double x0 = kLabelWidth + vp_.x_of(double(e.ts_ns - *row.origin_ns)),
             x1 = kLabelWidth + vp_.x_of(double(e.end_ns() - *row.origin_ns));
      return QRectF(x0, lane_y, std::max(2.0, x1 - x0), kLaneHeight - 1);
    }
    lane_y += int(std::max<size_t>(1, layout_->ranks()[row.rank].tracks[t].lanes.size())) * kLaneHeight;
  }
  return std::nullopt;  // the instance is on a track of another kind
}

void RanksView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (!layout_ || !rows_ || rows_->empty()) {
    p.drawText(rect(), Qt::AlignCenter, tr("Open a run to see its ranks side by side."));
    return;
  }
  // Ruler: the aligned point, and the view's ends relative to it.
  const double zero = kLabelWidth + vp_.x_of(0);
  p.setPen(palette().text().color());
  p.drawText(QRect(kLabelWidth, 0, width() - kLabelWidth, kRuler), Qt::AlignLeft | Qt::AlignVCenter,
             format_ns(vp_.start_ns));
  p.drawText(QRect(kLabelWidth, 0, width() - kLabelWidth - 4, kRuler), Qt::AlignRight | Qt::AlignVCenter,
             format_ns(vp_.end_ns()));
  std::vector<Mark> marks;
  int y = kRuler;
  for (size_t i = 0; i < rows_->size(); ++i) {
    const RankRow& row = (*rows_)[i];
    const RankView& rv = layout_->ranks()[row.rank];
    const int h = rowHeight(row);
    QString label = tr("rank %1").arg(rv.rank->rank);
    if (row.last) label += tr(" · last");
    if (row.late_peer) label += tr(" · late peer");
    p.setPen(palette().text().color());
    p.drawText(QRect(4, y, kLabelWidth - 6, h), Qt::AlignLeft | Qt::AlignVCenter, label);
    p.setPen(QColor(0, 0, 0, 40));
    p.drawLine(0, y + h - 1, width(), y + h - 1);
    if (!row.origin_ns) {
      p.setPen(Qt::gray);
      p.drawText(QRect(kLabelWidth, y, width() - kLabelWidth, h), Qt::AlignLeft | Qt::AlignVCenter,
                 tr("not on this rank"));
      y += h;
      continue;
    }
    Viewport vr = vp_;
    vr.start_ns += double(*row.origin_ns);
    LodOptions lod;
    lod.host_colours = &rv.host_colours;
    int lane_y = y + 2;
    for (uint32_t t : row.tracks) {
      const model::Track& track = rv.rank->tracks[t];
      marks.clear();
      track_marks(track, rv.tracks[t], vr, marks, lod);
      for (const Mark& m : marks) {
        QRectF r(kLabelWidth + m.x0, lane_y + m.lane * kLaneHeight, std::max(1.0f, m.x1 - m.x0), kLaneHeight - 1);
        p.fillRect(r, m.count > 1 ? rgb(m.colour).lighter(130) : rgb(m.colour));
        // The straggler analysis's last arrival at this slice's collective.
        if (m.count == 1 && across_ && across_->arrived_last(row.rank, {t, m.event})) {
          p.setPen(QPen(Qt::black, 1.5));
          p.drawRect(r.adjusted(0.5, 0.5, -0.5, -0.5));
        }
      }
      lane_y += int(std::max<size_t>(1, rv.tracks[t].lanes.size())) * kLaneHeight;
    }
    if (std::optional<QRectF> r = instanceRect(i)) {
      if (row.last) {
        p.setPen(QPen(kLast, 3));
        p.drawRect(r->adjusted(-1, -1, 1, 1));
      }
      if (row.late_peer) {
        p.setPen(QPen(kLatePeer, 2, Qt::DashLine));
        p.drawRect(r->adjusted(-3, -3, 3, 3));
      }
    }
    y += h;
  }
  p.setPen(QPen(palette().text().color(), 1, Qt::DotLine));
  p.drawLine(QPointF(zero, kRuler), QPointF(zero, y));
}

void RanksView::wheelEvent(QWheelEvent* e) {
  const double x = e->position().x() - kLabelWidth;
  vp_.zoom_around(x, e->angleDelta().y() > 0 ? 0.8 : 1.25);
  update();
}

void RanksView::mousePressEvent(QMouseEvent* e) { last_ = e->pos(); }

void RanksView::mouseMoveEvent(QMouseEvent* e) {
  if (!(e->buttons() & Qt::LeftButton)) return;
  vp_.pan_px(double(last_.x() - e->pos().x()));
  last_ = e->pos();
  update();
}

RanksDock::RanksDock(SelectionModel* selection, QWidget* parent)
    : QDockWidget(tr("Ranks"), parent), selection_(selection) {
  setObjectName("Ranks");
  auto* box = new QWidget(this);
  auto* v = new QVBoxLayout(box);
  v->setContentsMargins(2, 2, 2, 2);
  auto* bar = new QHBoxLayout;
  kind_ = new QComboBox(box);
  kind_->setObjectName("ranksTrackKind");
  kind_->addItems({tr("Communication"), tr("Compute"), tr("Host")});
  step_ = new QComboBox(box);
  step_->setObjectName("ranksStep");
  bar->addWidget(new QLabel(tr("Tracks:"), box));
  bar->addWidget(kind_);
  bar->addWidget(new QLabel(tr("Align on:"), box));
  bar->addWidget(step_);
  bar->addStretch(1);
  note_ = new QLabel(box);
  note_->setObjectName("ranksNote");
  note_->setWordWrap(true);
  note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  view_ = new RanksView(box);
  auto* scroll = new QScrollArea(box);
  scroll->setObjectName("ranksScroll");
  scroll->setWidget(view_);
  scroll->setWidgetResizable(true);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);  // the view pans and zooms itself
  v->addLayout(bar);
  v->addWidget(note_);
  v->addWidget(scroll, 1);
  setWidget(box);

  connect(kind_, &QComboBox::activated, this, [this](int i) { setChoice(TrackChoice(i)); });
  // A step picked: back to step alignment (the instance item, when there is one, is the last).
  connect(step_, &QComboBox::activated, this, [this](int i) {
    QVariant n = step_->itemData(i);
    if (n.typeId() == QMetaType::LongLong) alignOnStep(n.toLongLong());
  });
  connect(selection_, &SelectionModel::runChanged, this, &RanksDock::refresh);
  connect(selection_, &SelectionModel::acrossRanksRequested, this, &RanksDock::showInstance);
  refresh();
}

void RanksDock::refresh() {
  const analysis::AnalysedRun* run = selection_->run();
  across_ = run ? AcrossRanks(*run) : AcrossRanks();
  rows_.clear();
  instance_.reset();
  asked_by_.reset();
  view_->setRows(nullptr, nullptr, nullptr);
  step_->clear();
  if (!run || !selection_->layout()) {
    note_->setText(tr("Open a run to see its ranks side by side."));
    return;
  }
  std::vector<int64_t> steps = across_.steps();
  for (int64_t s : steps) step_->addItem(tr("step %1").arg(s), qlonglong(s));
  if (steps.empty()) {
    note_->setText(
        tr("The trace marks no step: pick a collective (a Prefetch row, or one in the timeline) to align on."));
    return;
  }
  // The first steady step when there is one: step 0 is often warm-up.
  alignOnStep(steps.size() > 1 ? steps[1] : steps[0]);
}

void RanksDock::setChoice(TrackChoice choice) {
  choice_ = choice;
  kind_->setCurrentIndex(int(choice));
  realign();
}

void RanksDock::alignOnStep(int64_t step) {
  instance_.reset();
  asked_by_.reset();
  step_number_ = step;
  int i = step_->findData(qlonglong(step));
  if (i >= 0) step_->setCurrentIndex(i);
  realign();
}

void RanksDock::showInstance(uint32_t rank, model::EventRef event) {
  std::optional<metrics::InstanceId> id = across_.instance_of(rank, event);
  if (!id) return;
  instance_ = id;
  asked_by_ = rank;
  realign();
  show();
  raise();
}

void RanksDock::realign() {
  const TimelineLayout* layout = selection_->layout();
  if (!layout || !selection_->run()) return;
  const model::Trace& trace = selection_->run()->trace;
  double lo = 0, hi = 1;
  if (instance_) {
    rows_ = across_.on_instance(*instance_, choice_, asked_by_);
    // The instance on every rank, with as much again on each side.
    for (const RankRow& r : rows_)
      if (r.instance && r.origin_ns)
        hi = std::max(hi, double(trace.ranks[r.rank].tracks[r.instance->track].events[r.instance->index].end_ns() -
                                 *r.origin_ns));
    lo = -hi;
    hi *= 2;
    QString kind =
        QString::fromUtf8(model::to_string(instance_->kind).data(), int(model::to_string(instance_->kind).size()));
    QString what =
        instance_->by_seq ? tr("%1 seq %2").arg(kind).arg(instance_->n) : tr("%1 #%2").arg(kind).arg(instance_->n + 1);
    if (!instance_->group.empty()) what += tr(" of group %1").arg(QString::fromStdString(instance_->group));
    QString text = tr("%1, arrivals on the wall clock (the earliest at 0)").arg(what);
    if (const metrics::StragglerInstance* s = across_.straggler(*instance_))
      text += tr("; rank %1 arrived last, %2 after the next-latest (red)")
                  .arg(s->last_rank)
                  .arg(format_ns(double(s->late_by_ns)));
    else
      text += tr("; the straggler analysis did not match it on every rank");
    if (asked_by_)
      if (const metrics::UnitPrefetch* u = across_.prefetch_pair(*asked_by_, *instance_))
        text += u->late_peer >= 0
                    ? tr("; late peer of rank %1's pair (unit %2 → AG %3): rank %4, %5 after it (dashed magenta)")
                          .arg(trace.ranks[*asked_by_].rank)
                          .arg(u->unit)
                          .arg(u->next_unit)
                          .arg(u->late_peer)
                          .arg(format_ns(double(u->late_peer_ns)))
                    : tr("; rank %1's pair (unit %2 → AG %3) has no late peer")
                          .arg(trace.ranks[*asked_by_].rank)
                          .arg(u->unit)
                          .arg(u->next_unit);
    note_->setText(text + ".");
    if (step_->findData(kInstanceItem) < 0) step_->addItem(tr("this collective"), kInstanceItem);
    step_->setCurrentIndex(step_->count() - 1);
  } else {
    rows_ = across_.on_step(step_number_, choice_);
    for (const RankRow& r : rows_)
      for (const model::Step& s : trace.ranks[r.rank].steps)
        if (s.number == step_number_) hi = std::max(hi, double(s.end_ns - s.start_ns));
    lo = -0.02 * hi;
    hi *= 1.02;
    note_->setText(tr("Step %1: each rank's step start at 0. Outlined black: the rank the straggler analysis names "
                      "last at that collective.")
                       .arg(step_number_));
    int extra = step_->findData(kInstanceItem);
    if (extra >= 0) step_->removeItem(extra);
  }
  worst_first(rows_, trace, instance_.has_value(), step_number_);
  view_->setRows(layout, &across_, &rows_);
  view_->fit(lo, hi);
  // Back to the top, where the worst rank is.
  if (auto* scroll = findChild<QScrollArea*>("ranksScroll")) scroll->verticalScrollBar()->setValue(0);
}

}  // namespace shardscope::viewer
