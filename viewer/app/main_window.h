// The viewer's window: File menu (open files or a run directory, recent runs), drag and drop, a progress bar
// while the loader works, a banner for truncated ranks and load warnings, the timeline, and docks for the
// selected event, the selected range's statistics, the prefetch check and the step summary.
#pragma once

#include <QMainWindow>

#include <memory>
#include <optional>

#include "viewer/app/loader.h"
#include "viewer/model/range_stats.h"
#include "viewer/model/timeline_layout.h"

class QLabel;
class QProgressBar;
class QMenu;
class QTableView;

namespace shardscope::viewer {

class TimelineWidget;
class PrefetchModel;
class StepModel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  void openAsync(const QStringList& paths);
  // Loads on this thread (for --screenshot). Returns the error when nothing loaded; failures of single
  // files go to `failures` instead of a dialog.
  QString openSync(const QStringList& paths, QStringList* failures);
  // Selects the first event named `name` (any rank) and zooms to it; false when there is none.
  bool selectByName(const QString& name);
  TimelineWidget* timeline() const { return timeline_; }

 protected:
  void dragEnterEvent(QDragEnterEvent*) override;
  void dropEvent(QDropEvent*) override;

 private:
  void present(LoadOutcome outcome, const QStringList& paths);
  void showEventDetails(uint32_t rank, uint32_t track, uint32_t index);
  void showRangeStats(uint32_t rank, qint64 lo, qint64 hi);
  void jumpToPrefetch(int row);
  void jumpToStep(int row);
  void rememberRecent(const QStringList& paths);
  void rebuildRecentMenu();

  Loader* loader_ = nullptr;
  TimelineWidget* timeline_ = nullptr;
  QLabel* banner_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* details_ = nullptr;
  QLabel* stats_ = nullptr;
  QTableView* prefetch_view_ = nullptr;
  QTableView* step_view_ = nullptr;
  PrefetchModel* prefetch_ = nullptr;
  StepModel* steps_ = nullptr;
  QMenu* recent_ = nullptr;
  std::shared_ptr<analysis::AnalysedRun> run_;
  std::unique_ptr<TimelineLayout> layout_;
  std::vector<std::optional<RangeIndex>> range_index_;  // per rank, built on its first range selection
};

}  // namespace shardscope::viewer
