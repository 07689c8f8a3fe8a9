// The viewer's window: File menu (open files or a run directory, recent runs), Help menu (the keyboard map),
// drag and drop, a progress bar while the loader works, a banner for truncated ranks and load warnings, the
// timeline with the cursor's time in the status bar, and docks for the selected event, the selected range's
// statistics, the colour legend, the prefetch check, the step summary, memory against the ZeRO model and
// the diff against a second run (a table), run B's timeline locked to A's by step, and every rank's
// tracks side by side (the Ranks dock), and a run opened from its rank summaries, a row per rank without
// events (the Ranks overview); an overview strip and a search bar above the timeline. The docks observe
// one SelectionModel (selection_model.h); each is its own class under viewer/app/docks/.
#pragma once

#include <QMainWindow>

#include <functional>
#include <memory>
#include <optional>

#include "viewer/app/loader.h"
#include "viewer/app/selection_model.h"
#include "viewer/model/search.h"
#include "viewer/model/timeline_layout.h"

class QDockWidget;
class QLabel;
class QMenu;
class QLineEdit;
class QPlainTextEdit;

namespace shardscope::viewer {

class TimelineWidget;
class LoadProgressBar;
class OverviewWidget;
class MemoryChartWidget;
class ComparisonDock;
class RanksOverviewDock;
class StepLock;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  void openAsync(const QStringList& paths);
  // Loads on this thread (for --screenshot). Returns the error when nothing loaded; failures of single
  // files go to `failures` instead of a dialog.
  QString openSync(const QStringList& paths, QStringList* failures);
  // Selects the first event named `name` (any rank) and zooms to it, a collective across ranks too (as a
  // click does); false when there is none.
  bool selectByName(const QString& name);
  TimelineWidget* timeline() const { return timeline_; }
  OverviewWidget* overview() const { return overview_; }
  MemoryChartWidget* memoryChart() const { return memory_chart_; }
  const analysis::AnalysedRun* run() const { return run_.get(); }
  SelectionModel* selection() const { return selection_; }
  QLabel* cursorReadout() const { return cursor_; }
  // Help > Keyboard map: a window listing every key (viewer/model/keymap.h); shown, not modal.
  QWidget* showKeyboardHelp();
  bool loading() const;
  LoadProgressBar* loadProgress() const { return progress_; }
  Loader* loader() const { return loader_; }

  // How warnings reach the user: a modal QMessageBox unless a sink is set (tests read the text instead).
  using WarningSink = std::function<void(const QString& title, const QString& text)>;
  void setWarningSink(WarningSink sink) { warn_ = std::move(sink); }

  // Search by name (what the search bar does): finds, then selects the first hit at or after the view's start.
  void search(const QString& text);
  void searchStep(bool forward);  // next / previous hit, wrapping
  const SearchResult& searchResult() const { return search_; }
  std::optional<size_t> currentHit() const { return hit_; }

  // A second run for A/B: its diff against the open one (analysis::diff_runs, rendered as `shardscope diff`).
  void openComparisonAsync(const QStringList& paths);
  QString openComparisonSync(const QStringList& paths);
  ComparisonDock* comparisonDock() const { return comparison_dock_; }
  // Run B's timeline, following run A's view by step (step_lock.h).
  TimelineWidget* comparisonTimeline() const { return comparison_timeline_; }
  // A run opened from rank summaries: every rank's row, no events (window_overview.cc).
  RanksOverviewDock* ranksOverviewDock() const { return ranks_overview_; }

 protected:
  void dragEnterEvent(QDragEnterEvent*) override;
  void dropEvent(QDropEvent*) override;
  bool eventFilter(QObject* watched, QEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  void present(LoadOutcome outcome, const QStringList& paths);
  void presentComparison(LoadOutcome outcome, const QStringList& paths);
  void presentOverview(LoadOutcome outcome, const QStringList& paths);
  void expandRank(const RankOverviewRow& row);  // loads the rank's trace as a one-rank run
  // A run opened from traces: selects the collective instance rank `rank_number` arrived last at by the most.
  void selectLastArrival(int rank_number);
  void buildSearchBar();
  void buildAnalysisDocks();
  void buildHelpMenu();
  void buildKeys();  // window_keys.cc: marks, `/`, `?`, Esc, the Area dock
  // Esc: hides the keyboard map, else clears the search; false when nothing was open.
  bool closeOverlay();
  // A dock beside the others: the one line a new dock costs.
  QDockWidget* addDock(QDockWidget* dock, Qt::DockWidgetArea area);
  void warn(const QString& title, const QString& text);
  void jumpToEvent(uint32_t rank, model::EventRef ref);
  void showHit();
  void rememberRecent(const QStringList& paths);
  void rebuildRecentMenu();
  // The timeline's row arrangement is kept per run directory (QSettings "rows/<hash of the directory>").
  QString arrangementKey() const;
  void restoreArrangement();

  Loader* loader_ = nullptr;
  Loader* comparison_loader_ = nullptr;
  TimelineWidget* timeline_ = nullptr;
  OverviewWidget* overview_ = nullptr;
  MemoryChartWidget* memory_chart_ = nullptr;
  ComparisonDock* comparison_dock_ = nullptr;
  RanksOverviewDock* ranks_overview_ = nullptr;
  QString expanding_, expanding_note_;  // the trace of a rank being loaded from the overview, and where it was found
  StepLock* step_lock_ = nullptr;
  TimelineWidget* comparison_timeline_ = nullptr;   // run B, in a dock beside run A's timeline
  SelectionModel* comparison_selection_ = nullptr;  // run B's selection
  QLineEdit* search_edit_ = nullptr;
  QLabel* search_count_ = nullptr;
  WarningSink warn_;
  SearchResult search_;
  std::string search_text_;
  std::optional<size_t> hit_;
  std::shared_ptr<analysis::AnalysedRun> comparison_;
  std::unique_ptr<TimelineLayout> comparison_layout_;
  QStringList run_paths_, comparison_paths_;
  QLabel* banner_ = nullptr;
  LoadProgressBar* progress_ = nullptr;  // what is being read, and Cancel
  QLabel* cursor_ = nullptr;             // the time under the mouse, in the status bar
  SelectionModel* selection_ = nullptr;
  QWidget* keyboard_help_ = nullptr;
  QMenu* recent_ = nullptr;
  std::shared_ptr<analysis::AnalysedRun> run_;
  std::unique_ptr<TimelineLayout> layout_;
};

}  // namespace shardscope::viewer
