#include "viewer/app/panels.h"

#include "analyzer/report/prefetch_render.h"
#include "viewer/app/timeline_widget.h"

namespace shardscope::viewer {

namespace {
QString pct(std::optional<double> v) { return v ? QString::number(*v, 'f', 1) + " %" : QStringLiteral("n/a"); }
}  // namespace

void PrefetchModel::setRun(const analysis::AnalysedRun* run) {
  beginResetModel();
  run_ = run;
  items_.clear();
  if (run)
    for (size_t r = 0; r < run->report.ranks.size(); ++r)
      for (const metrics::StepPrefetch& s : run->report.ranks[r].prefetch.steps)
        for (const metrics::UnitPrefetch& u : s.units) items_.push_back({uint32_t(r), &s, &u});
  endResetModel();
}

QVariant PrefetchModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || (role != Qt::DisplayRole && role != Qt::ToolTipRole)) return {};
  const Item& it = items_[size_t(index.row())];
  const report::RankReport& rr = run_->report.ranks[it.rank];
  if (role == Qt::ToolTipRole) return QString::fromStdString(report::step_sentence(*it.step, rr.prefetch));
  switch (index.column()) {
    case 0: return rr.rank;
    case 1: return qlonglong(it.step->step);
    case 2: return QStringLiteral("%1 → AG %2").arg(it.unit->unit).arg(it.unit->next_unit);
    case 3: return QString::fromStdString(report::verdict_name(it.step->verdict));
    case 4: return QString::number(100.0 * it.unit->hidden_share(), 'f', 1) + " %";
    case 5: return format_ns(double(it.unit->exposed_wait_ns));
    case 6: return it.unit->cause == metrics::Cause::None ? QString() : QString::fromStdString(report::cause_name(it.unit->cause));
  }
  return {};
}

QVariant PrefetchModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Rank", "Step", "Unit", "Step verdict", "Hidden", "Exposed wait", "Cause"};
  return tr(names[section]);
}

void StepModel::setRun(const analysis::AnalysedRun* run) {
  beginResetModel();
  run_ = run;
  items_.clear();
  if (run)
    for (size_t r = 0; r < run->report.ranks.size(); ++r)
      for (const report::StepRow& s : run->report.ranks[r].steps) items_.push_back({uint32_t(r), &s});
  endResetModel();
}

QVariant StepModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || role != Qt::DisplayRole) return {};
  const Item& it = items_[size_t(index.row())];
  const metrics::WindowMetrics& m = it.step->m;
  switch (index.column()) {
    case 0: return run_->report.ranks[it.rank].rank;
    case 1: return qlonglong(it.step->step.number);
    case 2: return format_ns(double(m.window_ns));
    case 3: return format_ns(double(m.compute_ns));
    case 4: return format_ns(double(m.comm_ns));
    case 5: return format_ns(double(m.overlap_ns));
    case 6: return format_ns(double(m.exposed_ns()));
    case 7: return pct(m.overlap_pct());
    case 8: return format_ns(double(m.idle_ns()));
  }
  return {};
}

QVariant StepModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Rank", "Step", "Window", "Compute", "Communication", "Overlapped comm.", "Exposed comm.", "Overlap", "Idle"};
  return tr(names[section]);
}

}  // namespace shardscope::viewer
