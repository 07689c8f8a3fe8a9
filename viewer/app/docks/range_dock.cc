#include "viewer/app/docks/range_dock.h"

#include <QLabel>

#include "viewer/app/selection_model.h"
#include "viewer/app/timeline_widget.h"
#include "viewer/model/viewport.h"

namespace shardscope::viewer {

RangeDock::RangeDock(SelectionModel* selection, QWidget* parent)
    : QDockWidget(tr("Range"), parent), selection_(selection) {
  setObjectName("Range");
  stats_ = new QLabel(this);
  stats_->setObjectName("rangeStats");
  stats_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  stats_->setWordWrap(true);
  stats_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  setWidget(stats_);
  connect(selection_, &SelectionModel::runChanged, this,
          [this] { index_.assign(selection_->layout() ? selection_->layout()->ranks().size() : 0, std::nullopt); });
  connect(selection_, &SelectionModel::rangeChanged, this, &RangeDock::refresh);
  refresh();
}

QString RangeDock::text() const { return stats_->text(); }

void RangeDock::refresh() {
  const TimelineLayout* layout = selection_->layout();
  const auto& range = selection_->range();
  if (!layout || !range || range->rank >= index_.size()) {
    stats_->setText(tr("Shift+drag on the timeline to measure a range; Esc clears it."));
    return;
  }
  const uint32_t rank = range->rank;
  if (!index_[rank]) index_[rank] = build_range_index(*layout->ranks()[rank].rank);
  RangeStats s = range_stats(*index_[rank], range->lo, range->hi);
  QString html = tr("<b>rank %1</b>, %2 from %3<table>")
                     .arg(layout->ranks()[rank].rank->rank)
                     .arg(format_ns(ns_span(range->lo, range->hi)), format_ns(ns_span(layout->start_ns(), range->lo)));
  auto row = [&html](const QString& k, const QString& v) {
    html += "<tr><td>" + k + "&nbsp;</td><td>" + v + "</td></tr>";
  };
  for (size_t c = 0; c < kClassCount; ++c)
    if (s.class_ns[c] > 0)
      row(QString::fromUtf8(model::to_string(model::IntervalClass(c)).data()), format_ns(double(s.class_ns[c])));
  auto pct = [](std::optional<double> v) { return v ? QString::number(*v, 'f', 1) + " %" : QStringLiteral("n/a"); };
  row(tr("overlap of comm."), pct(s.window.overlap_pct()));
  row(tr("exposed comm."), format_ns(double(s.window.exposed_ns())));
  row(tr("idle"), pct(s.window.idle_pct()));
  html += "</table>";
  stats_->setText(html);
}

}  // namespace shardscope::viewer
