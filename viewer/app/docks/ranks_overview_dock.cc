#include "viewer/app/docks/ranks_overview_dock.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include "analyzer/report/sentences.h"
#include "viewer/app/panels.h"
#include "viewer/app/timeline_widget.h"

namespace shardscope::viewer {

namespace {
QString verdict_text(const RankOverviewRow& r) {
  if (!r.prefetch_checked) return QObject::tr("n/a");
  const QString hidden = QString::number(100.0 * r.hidden_share, 'f', 0);
  return r.prefetch == metrics::Verdict::Effective ? QObject::tr("effective (%1 % hidden)").arg(hidden)
                                                   : QObject::tr("NOT effective (%1 % hidden)").arg(hidden);
}
QString run_verdict(metrics::Verdict v) {
  switch (v) {
    case metrics::Verdict::Effective: return QObject::tr("effective");
    case metrics::Verdict::NotEffective: return QObject::tr("NOT effective");
    case metrics::Verdict::NotApplicable: break;
  }
  return QObject::tr("nothing to check");
}
}  // namespace

void RanksOverviewTable::setOverview(std::shared_ptr<const RanksOverview> overview) {
  beginResetModel();
  overview_ = std::move(overview);
  rows_ = overview_ ? overview_->rows : std::vector<RankOverviewRow>{};
  endResetModel();
}

void RanksOverviewTable::sort(int column, Qt::SortOrder order) {
  static const OverviewColumn by[] = {OverviewColumn::Rank,      OverviewColumn::StepTime, OverviewColumn::Compute,
                                      OverviewColumn::Comm,      OverviewColumn::Exposed,  OverviewColumn::ExposedPct,
                                      OverviewColumn::TimesLast, OverviewColumn::Prefetch, OverviewColumn::Rank};
  emit layoutAboutToBeChanged();
  if (column < 0 || column >= ColumnCount) slowest_first(rows_);
  else
    sort_rows(rows_, by[column], order == Qt::DescendingOrder);
  emit layoutChanged();
}

QVariant RanksOverviewTable::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != kSortRole)) return {};
  const RankOverviewRow& r = rows_[size_t(index.row())];
  // Without steady steps the per-step cells say so (the reason is in the tooltip).
  const QString none = r.steps == 0 ? tr("no steps") : tr("no steady step");
  auto ns = [&](const std::optional<int64_t>& v) -> QVariant {
    if (role == kSortRole) return v ? qlonglong(*v) : qlonglong(-1);
    return v ? QVariant(format_ns(double(*v))) : QVariant(none);
  };
  if (role == Qt::ToolTipRole) {
    QString tip = tr("rank %1: %2 step(s), %3 steady; summary %4; trace %5")
                      .arg(r.rank)
                      .arg(r.steps)
                      .arg(r.steady_steps)
                      .arg(r.summary.empty() ? tr("none (summarised on opening)") : QString::fromStdString(r.summary),
                           QString::fromStdString(r.source));
    if (!r.step_ns && r.steps_na != analysis::Na::None)
      tip += tr("\nno per-step numbers: %1").arg(QString::fromStdString(report::na_text(r.steps_na)));
    if (r.times_last)
      tip += tr("\nlast at %1 collective instance(s), at most %2 after the next-latest rank")
                 .arg(r.times_last)
                 .arg(format_ns(double(r.max_late_ns)));
    return tip + (overview_ && overview_->events_loaded > 0
                      ? tr("\nDouble-click: select the collective this rank arrived last at by the most")
                      : tr("\nDouble-click: load this rank's events into the timeline"));
  }
  switch (index.column()) {
    case Rank: return r.rank;
    case StepTime: return ns(r.step_ns);
    case Compute: return ns(r.compute_ns);
    case Comm: return ns(r.comm_ns);
    case Exposed: return ns(r.exposed_ns);
    case ExposedPct:
      if (role == kSortRole) return r.exposed_pct.value_or(-1.0);
      return r.exposed_pct ? QString::number(*r.exposed_pct, 'f', 1) + " %" : none;
    case TimesLast: return qulonglong(r.times_last);
    case Prefetch: return verdict_text(r);
    case Summary: return QFileInfo(QString::fromStdString(r.summary.empty() ? r.source : r.summary)).fileName();
  }
  return {};
}

QVariant RanksOverviewTable::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Rank",      "Step time", "Compute / step", "Comm. / step", "Exposed / step",
                                "Exposed %", "Last at",   "Prefetch",       "Summary"};
  return tr(names[section]);
}

RanksOverviewDock::RanksOverviewDock(QWidget* parent) : QDockWidget(tr("Ranks overview"), parent) {
  setObjectName("Ranks overview");  // its title, as --raise names docks
  auto* box = new QWidget(this);
  auto* v = new QVBoxLayout(box);
  v->setContentsMargins(2, 2, 2, 2);
  note_ = new QLabel(tr("Open a directory of rank summaries (shardscope summarize) to see every rank here without "
                        "loading its events."),
                     box);
  note_->setWordWrap(true);
  note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  model_ = new RanksOverviewTable(this);
  view_ = new QTableView(box);
  view_->setModel(model_);
  view_->horizontalHeader()->setSortIndicator(
      -1, Qt::DescendingOrder);  // the model's order (slowest first) until a header is clicked
  view_->setSortingEnabled(true);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view_->verticalHeader()->hide();
  view_->horizontalHeader()->setStretchLastSection(true);
  v->addWidget(note_);
  v->addWidget(view_, 1);
  setWidget(box);
  connect(view_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) { expand(i.row()); });
}

void RanksOverviewDock::setOverview(std::shared_ptr<const RanksOverview> overview) {
  overview_ = std::move(overview);
  view_->horizontalHeader()->setSortIndicator(-1, Qt::DescendingOrder);
  model_->setOverview(overview_);
  if (!overview_) {
    note_->setText(
        tr("Open a directory of rank summaries (shardscope summarize) to see every rank here without loading its "
           "events."));
    return;
  }
  const RanksOverview& o = *overview_;
  const bool traces = o.events_loaded > 0;  // a run opened from its traces
  QString text = traces ? tr("%1 ranks from their traces. ").arg(o.rows.size())
                        : tr("%1 ranks from their summaries; no events loaded. ").arg(o.rows.size());
  if (o.straggler >= 0) {
    for (const RankOverviewRow& r : o.rows)
      if (r.rank == o.straggler)
        text += tr("Straggler: rank %1, last at %2 of %3 collective instances. ")
                    .arg(r.rank)
                    .arg(r.times_last)
                    .arg(o.instances);
  } else {
    text += tr("No straggler (%1 collective instances matched). ").arg(o.instances);
  }
  text += tr("Prefetch: %1. ").arg(run_verdict(o.prefetch)) +
          (traces ? tr("Double-click a rank to select where it arrived last by the most.")
                  : tr("Double-click a rank to load its events."));
  note_->setText(text);
  view_->resizeColumnsToContents();
}

void RanksOverviewDock::expand(int row) {
  if (row < 0 || row >= model_->rowCount()) return;
  emit expandRequested(model_->row(row));
}

}  // namespace shardscope::viewer
