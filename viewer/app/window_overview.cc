// The window with a run opened from its rank summaries: the Ranks overview in front, the timeline empty (no
// events loaded), and a rank's trace loaded on its own, through the window's ordinary open path, when the
// user expands its row.
#include <QLabel>
#include <QStatusBar>

#include "viewer/app/docks/comparison_dock.h"
#include "viewer/app/docks/ranks_overview_dock.h"
#include "viewer/app/main_window.h"
#include "viewer/app/overview_widget.h"
#include "viewer/app/selection_model.h"
#include "viewer/app/timeline_widget.h"

namespace shardscope::viewer {

void MainWindow::presentOverview(LoadOutcome outcome, const QStringList& paths) {
  if (!paths.isEmpty()) {
    run_paths_ = paths;
    rememberRecent(paths);
  }
  // Whatever was open goes: this run's events stay on disk until a rank is expanded.
  timeline_->setTimeline(nullptr);
  overview_->setTimeline(nullptr);
  comparison_timeline_->setTimeline(nullptr);
  comparison_selection_->setRun(nullptr, nullptr);
  search_ = {};
  search_text_.clear();
  hit_.reset();
  selection_->setRun(nullptr, nullptr);
  run_.reset();
  layout_.reset();
  comparison_layout_.reset();
  comparison_.reset();
  comparison_dock_->clear();
  expanding_.clear();

  const RanksOverview& o = *outcome.overview;
  ranks_overview_->setOverview(std::move(outcome.overview));
  ranks_overview_->show();
  ranks_overview_->raise();

  QStringList lines;
  for (const std::string& w : o.warnings) lines << QString::fromStdString(w);
  for (const plugins::FileFailure& f : o.failures)
    lines << tr("Not loaded: %1: %2").arg(QString::fromStdString(f.path), QString::fromStdString(f.message));
  lines << tr("%1 ranks opened from their summaries; no events are loaded. Double-click a rank in Ranks overview to "
              "load its trace.")
               .arg(o.rows.size());
  banner_->setText(lines.join("\n"));
  banner_->setVisible(true);
  setWindowTitle(tr("shardscope viewer — %1 ranks from summaries").arg(o.rows.size()));
}

void MainWindow::expandRank(const RankOverviewRow& row) {
  if (loader_->busy()) return;
  // A run opened from traces has the rank's events already: show where it was latest instead.
  if (run_ && ranks_overview_->overview() && ranks_overview_->overview()->events_loaded > 0)
    return selectLastArrival(row.rank);
  const TraceLookup t = trace_of(row);
  if (!t.path) {
    warn(tr("Trace not found"), QString::fromStdString(t.note));
    return;
  }
  expanding_ = QString::fromStdString(t.path->string());
  expanding_note_ = tr("Rank %1 of the %2 ranks in Ranks overview, loaded from %3 (%4).")
                        .arg(row.rank)
                        .arg(ranks_overview_->overview() ? ranks_overview_->overview()->rows.size() : 0)
                        .arg(expanding_, QString::fromStdString(t.note));
  statusBar()->showMessage(tr("Loading rank %1 from %2").arg(row.rank).arg(expanding_), 5000);
  loader_->start({expanding_});
}

void MainWindow::selectLastArrival(int rank_number) {
  const metrics::StragglerInstance* worst = nullptr;
  for (const metrics::StragglerInstance& s : run_->report.stragglers.instances)
    if (s.last_rank == rank_number && (!worst || s.late_by_ns > worst->late_by_ns)) worst = &s;
  const AcrossRanks* across = selection_->across();
  for (uint32_t r = 0; worst && across && r < run_->trace.ranks.size(); ++r)
    if (run_->trace.ranks[r].rank == rank_number)
      if (auto e = across->find(r, {worst->kind, worst->group, worst->by_seq, int64_t(worst->ordinal)}))
        return jumpToEvent(r, *e);
  statusBar()->showMessage(tr("Rank %1 arrived last at no collective instance").arg(rank_number), 5000);
}

}  // namespace shardscope::viewer
