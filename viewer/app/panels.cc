#include "viewer/app/panels.h"

#include "analyzer/report/prefetch_render.h"
#include "viewer/app/timeline_widget.h"

namespace shardscope::viewer {

namespace {
QString pct(std::optional<double> v) { return v ? QString::number(*v, 'f', 1) + " %" : QStringLiteral("n/a"); }
QVariant pct_sort(std::optional<double> v) { return v ? *v : -1.0; }
QString qs(const std::string& s) { return QString::fromStdString(s); }
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

QString PrefetchModel::verdictText() const {
  if (!run_) return {};
  QStringList lines;
  bool warm = false;
  for (const report::RankReport& rr : run_->report.ranks) {
    lines << tr("rank %1: %2").arg(rr.rank).arg(qs(report::run_sentence(rr.prefetch)));
    warm = warm || report::has_warm_up(rr.prefetch);
  }
  lines << tr("Rule: %1.").arg(qs(report::run_rule(warm)));
  return lines.join('\n');
}

QString PrefetchModel::emptyReason() const {
  if (!run_) return tr("Open a run to see its prefetch check.");
  if (!items_.empty()) return {};
  QStringList lines;
  for (const report::RankReport& rr : run_->report.ranks) {
    const metrics::RankPrefetch& p = rr.prefetch;
    QString why;
    if (p.na != metrics::NotApplicable::None) why = qs(report::na_sentence(p.na, 0));
    else if (p.steps.empty())
      why = tr("no step with backward all-gathers");
    else
      why = qs(report::na_sentence(p.steps.front().na, p.steps.front().na_count));
    lines << tr("rank %1: nothing to check: %2").arg(rr.rank).arg(why);
  }
  if (lines.isEmpty()) lines << tr("No rank in this run.");
  return lines.join('\n');
}

QVariant PrefetchModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != kSortRole)) return {};
  const Item& it = items_[size_t(index.row())];
  const report::RankReport& rr = run_->report.ranks[it.rank];
  const metrics::UnitPrefetch& u = *it.unit;
  // The step's verdict is the step's, not the pair's: it goes in the tooltip, and each row says whether its
  // own all-gather hid (the analyzer gives a pair under kHiddenShareThreshold a cause), so a 0 % hidden pair
  // never reads "effective".
  if (role == Qt::ToolTipRole)
    return tr("step %1: %2").arg(it.step->step).arg(qs(report::step_sentence(*it.step, rr.prefetch)));
  const bool hidden = u.hidden_share() >= metrics::kHiddenShareThreshold;
  const bool sort = role == kSortRole;
  switch (index.column()) {
    case Rank: return rr.rank;
    case Step:
      if (sort) return qlonglong(it.step->step);
      return it.step->warm_up ? tr("%1 (warm-up)").arg(it.step->step) : QString::number(it.step->step);
    case Unit:
      if (sort) return u.unit;
      return QStringLiteral("%1 → AG %2").arg(u.unit).arg(u.next_unit);
    case Pair: return hidden ? tr("hidden") : tr("exposed");
    case Hidden:
      if (sort) return u.hidden_share();
      return QString::number(100.0 * u.hidden_share(), 'f', 1) + " %";
    case ExposedWait:
      if (sort) return qlonglong(u.exposed_wait_ns);
      return format_ns(double(u.exposed_wait_ns));
    case Cause: return u.cause == metrics::Cause::None ? QString() : qs(report::cause_name(u.cause));
  }
  return {};
}

QVariant PrefetchModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Rank", "Step", "Unit", "All-gather", "Hidden", "Exposed wait", "Cause"};
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
  if (!index.isValid() || (role != Qt::DisplayRole && role != kSortRole)) return {};
  const Item& it = items_[size_t(index.row())];
  const metrics::WindowMetrics& m = it.step->m;
  const bool sort = role == kSortRole;
  auto ns = [sort](int64_t v) -> QVariant { return sort ? QVariant(qlonglong(v)) : QVariant(format_ns(double(v))); };
  auto share = [sort](std::optional<double> v) -> QVariant { return sort ? pct_sort(v) : QVariant(pct(v)); };
  switch (index.column()) {
    case Rank: return run_->report.ranks[it.rank].rank;
    case Step: return qlonglong(it.step->step.number);
    case Window: return ns(m.window_ns);
    case Compute: return ns(m.compute_ns);
    case Comm: return ns(m.comm_ns);
    case CommPct: return share(m.comm_fraction_pct());
    case Overlapped: return ns(m.overlap_ns);
    case Exposed: return ns(m.exposed_ns());
    case ExposedPct: return share(m.exposed_fraction_pct());
    case Overlap: return share(m.overlap_pct());
    case Idle: return ns(m.idle_ns());
    case IdlePct: return share(m.idle_pct());
  }
  return {};
}

QVariant StepModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {
      "Rank",          "Step",      "Window",  "Compute", "Communication", "Comm. %", "Overlapped comm.",
      "Exposed comm.", "Exposed %", "Overlap", "Idle",    "Idle %"};
  return tr(names[section]);
}

}  // namespace shardscope::viewer
