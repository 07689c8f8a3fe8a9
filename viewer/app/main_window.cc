#include "viewer/app/main_window.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSettings>
#include <QStatusBar>
#include <QVBoxLayout>

#include "viewer/app/docks/event_dock.h"
#include "viewer/app/docks/legend_dock.h"
#include "viewer/app/docks/prefetch_dock.h"
#include "viewer/app/docks/ranks_dock.h"
#include "viewer/app/docks/ranks_overview_dock.h"
#include "viewer/app/docks/comparison_dock.h"
#include "viewer/app/docks/range_dock.h"
#include "viewer/app/docks/steps_dock.h"
#include "viewer/app/load_progress_bar.h"
#include "viewer/app/memory_chart_widget.h"
#include "viewer/app/overview_widget.h"
#include "viewer/app/step_lock.h"
#include "viewer/app/timeline_widget.h"
#include "viewer/model/open_filter.h"
#include "viewer/model/run_memory.h"

namespace shardscope::viewer {

namespace {
constexpr int kMaxRecent = 8;
}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("shardscope viewer"));
  setAcceptDrops(true);
  loader_ = new Loader(this);
  comparison_loader_ = new Loader(this);
  selection_ = new SelectionModel(this);

  auto* central = new QWidget(this);
  auto* box = new QVBoxLayout(central);
  box->setContentsMargins(0, 0, 0, 0);
  box->setSpacing(0);
  banner_ = new QLabel(central);
  banner_->setObjectName("banner");
  banner_->setWordWrap(true);
  banner_->setStyleSheet("QLabel { background: #FFF3CD; color: #664D03; padding: 4px; }");
  banner_->hide();
  progress_ = new LoadProgressBar(central);
  progress_->watch(loader_);
  progress_->watch(comparison_loader_);
  timeline_ = new TimelineWidget(selection_, central);
  overview_ = new OverviewWidget(timeline_, central);
  box->addWidget(banner_);
  box->addWidget(progress_);
  box->addWidget(overview_);
  box->addWidget(timeline_, 1);
  setCentralWidget(central);

  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open files..."), QKeySequence::Open, this, [this] {
    QStringList files = QFileDialog::getOpenFileNames(this, tr("Open trace files"), {},
                                                      QString::fromStdString(open_filter(viewer_formats().formats())));
    if (!files.isEmpty()) openAsync(files);
  });
  file->addAction(tr("Open run &directory..."), this, [this] {
    QString dir = QFileDialog::getExistingDirectory(this, tr("Open run directory"));
    if (!dir.isEmpty()) openAsync({dir});
  });
  file->addAction(tr("Open for &comparison..."), this, [this] {
    QStringList files = QFileDialog::getOpenFileNames(this, tr("Open a second run (trace files) to compare with"), {},
                                                      QString::fromStdString(open_filter(viewer_formats().formats())));
    if (!files.isEmpty()) openComparisonAsync(files);
  });
  file->addAction(tr("Open run directory for c&omparison..."), this, [this] {
    QString dir = QFileDialog::getExistingDirectory(this, tr("Open a second run directory to compare with"));
    if (!dir.isEmpty()) openComparisonAsync({dir});
  });
  recent_ = file->addMenu(tr("&Recent"));
  rebuildRecentMenu();
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  cursor_ = new QLabel(this);
  cursor_->setObjectName("cursorTime");
  cursor_->setMinimumWidth(320);
  statusBar()->addPermanentWidget(cursor_);

  // The docks: each observes the selection; one line each.
  addDock(new EventDock(selection_, this), Qt::RightDockWidgetArea);
  addDock(new RangeDock(selection_, this), Qt::RightDockWidgetArea);
  addDock(new LegendDock(this), Qt::RightDockWidgetArea);
  QDockWidget* sd = addDock(new StepsDock(selection_, this), Qt::BottomDockWidgetArea);
  QDockWidget* pd = addDock(new PrefetchDock(selection_, this), Qt::BottomDockWidgetArea);
  tabifyDockWidget(sd, pd);
  pd->raise();
  // Beside the tables, not a tab behind them: a Prefetch row shows its all-gather there with the row in view.
  splitDockWidget(pd, addDock(new RanksDock(selection_, this), Qt::BottomDockWidgetArea), Qt::Horizontal);
  tabifyDockWidget(pd, ranks_overview_ = static_cast<RanksOverviewDock*>(
                           addDock(new RanksOverviewDock(this), Qt::BottomDockWidgetArea)));
  pd->raise();
  connect(ranks_overview_, &RanksOverviewDock::expandRequested, this, &MainWindow::expandRank);
  buildSearchBar();
  buildAnalysisDocks();
  buildKeys();  // before the Help menu: File, View, Help
  buildHelpMenu();

  // The timeline and the docks share selection_: the timeline writes clicks and ranges there and follows
  // the docks' jumps itself; the window only saves the arrangement and shows the cursor's time.
  connect(timeline_, &TimelineWidget::arrangementChanged, this, [this] {
    if (QString key = arrangementKey(); !key.isEmpty())
      QSettings("shardscope", "viewer").setValue(key, timeline_->saveArrangement());
  });
  connect(timeline_, &TimelineWidget::cursorMoved, this, [this](const QString& text) { cursor_->setText(text); });
  connect(loader_, &Loader::finished, this, [this](const QStringList& paths) { present(loader_->take(), paths); });
  connect(comparison_loader_, &Loader::finished, this,
          [this](const QStringList& paths) { presentComparison(comparison_loader_->take(), paths); });
}

MainWindow::~MainWindow() {
  step_lock_->setEnabled(false);
  timeline_->setTimeline(nullptr);
  overview_->setTimeline(nullptr);
  comparison_timeline_->setTimeline(nullptr);
}

bool MainWindow::loading() const { return loader_->busy() || comparison_loader_->busy(); }

void MainWindow::warn(const QString& title, const QString& text) {
  if (warn_) warn_(title, text);
  else
    QMessageBox::warning(this, title, text);
}

void MainWindow::openAsync(const QStringList& paths) {
  if (loader_->busy()) return;
  loader_->start(paths);
}

QString MainWindow::openSync(const QStringList& paths, QStringList* failures) {
  LoadOutcome o = load_run(paths);
  if (!o.run && !o.overview) return QString::fromStdString(o.error);
  run_paths_ = paths;
  if (failures && o.run)
    for (const plugins::FileFailure& f : o.run->failures)
      failures->push_back(QString::fromStdString(f.path + ": " + f.message));
  present(std::move(o), {});
  return {};
}

void MainWindow::present(LoadOutcome outcome, const QStringList& paths) {
  if (outcome.cancelled) {
    // The user stopped it: the window stays as it was (the previous run, or empty).
    statusBar()->showMessage(tr("Loading cancelled"), 5000);
    return;
  }
  if (outcome.overview) return presentOverview(std::move(outcome), paths);
  if (!outcome.run) {
    // Nothing loaded: say why, keep what was open.
    warn(tr("Could not open"), QString::fromStdString(outcome.error));
    return;
  }
  if (!paths.isEmpty()) {
    run_paths_ = paths;
    rememberRecent(paths);
    if (!outcome.run->failures.empty()) {
      QString text = tr("These files did not load; the others are shown:");
      for (const plugins::FileFailure& f : outcome.run->failures)
        text += "\n\n" + QString::fromStdString(f.path) + ": " + QString::fromStdString(f.message);
      warn(tr("Some files did not load"), text);
    }
  }
  timeline_->setTimeline(nullptr);
  overview_->setTimeline(nullptr);
  search_ = {};
  search_text_.clear();
  hit_.reset();
  selection_->setRun(nullptr, nullptr);
  run_ = std::move(outcome.run);
  layout_ = std::make_unique<TimelineLayout>(run_->trace);
  timeline_->setTimeline(layout_.get());
  restoreArrangement();
  overview_->setTimeline(layout_.get());
  // A comparison made against the previous run no longer holds.
  comparison_timeline_->setTimeline(nullptr);
  comparison_selection_->setRun(nullptr, nullptr);
  comparison_layout_.reset();
  comparison_.reset();
  comparison_dock_->clear();
  selection_->setRun(run_.get(), layout_.get());
  // A rank opened from the overview keeps the overview; any other run shows its own ranks there, with what a
  // run of summaries shows (the same report's stragglers: `shardscope report`'s numbers).
  const bool from_overview = !expanding_.isEmpty() && paths == QStringList{expanding_};
  if (!from_overview) ranks_overview_->setOverview(std::make_shared<RanksOverview>(overview_of(*run_)));
  expanding_.clear();
  release_free_memory();  // the parse's temporaries are gone; their pages would stay resident

  // The banner: truncated ranks and the loader's warnings (ranks from different runs, guessed ranks, ...).
  QStringList lines;
  for (const model::Rank& r : run_->trace.ranks)
    if (r.truncated)
      lines << tr("Rank %1 is truncated (%2): it is shown up to where it ends.")
                   .arg(r.rank)
                   .arg(QString::fromStdString(r.source));
  for (const std::string& w : run_->warnings) lines << QString::fromStdString(w);
  for (const plugins::FileFailure& f : run_->failures)
    lines << tr("Not loaded: %1: %2").arg(QString::fromStdString(f.path), QString::fromStdString(f.message));
  if (from_overview) lines << expanding_note_;
  banner_->setText(lines.join("\n"));
  banner_->setVisible(!lines.isEmpty());
  setWindowTitle(tr("shardscope viewer — %1 ranks, %2 events").arg(run_->trace.ranks.size()).arg(layout_->events()));
}

QString MainWindow::arrangementKey() const {
  if (run_paths_.isEmpty()) return {};
  // The run's directory: the one opened, or the first file's. Hashed: a path holds characters QSettings
  // keys treat as separators.
  QFileInfo first(run_paths_.front());
  QString dir = first.isDir() ? first.absoluteFilePath() : first.absolutePath();
  dir = QFileInfo(dir).canonicalFilePath().isEmpty() ? QDir::cleanPath(dir) : QFileInfo(dir).canonicalFilePath();
  return "rows/" + QString::fromLatin1(QCryptographicHash::hash(dir.toUtf8(), QCryptographicHash::Sha1).toHex());
}

void MainWindow::restoreArrangement() {
  QString key = arrangementKey();
  if (key.isEmpty()) return;
  QString saved = QSettings("shardscope", "viewer").value(key).toString();
  if (!saved.isEmpty()) timeline_->restoreArrangement(saved);  // unreadable text leaves the defaults
}

QDockWidget* MainWindow::addDock(QDockWidget* dock, Qt::DockWidgetArea area) {
  addDockWidget(area, dock);
  return dock;
}

bool MainWindow::selectByName(const QString& name) {
  if (!layout_) return false;
  std::string n = name.toStdString();
  for (uint32_t r = 0; r < layout_->ranks().size(); ++r) {
    const model::Rank& rank = *layout_->ranks()[r].rank;
    model::StringId id = rank.strings.find(n);
    if (id == model::kNoString) continue;
    for (uint32_t t = 0; t < rank.tracks.size(); ++t)
      for (uint32_t i = 0; i < rank.tracks[t].events.size(); ++i)
        if (const model::Event& e = rank.tracks[t].events[i]; e.name == id) {
          jumpToEvent(r, {t, i});
          // As a click does: a collective on every rank too (the Ranks dock, its late rank marked).
          if (e.cls == model::IntervalClass::Communication && e.ph == 'X') selection_->showAcrossRanks(r, {t, i});
          return true;
        }
  }
  return false;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  QStringList paths;
  for (const QUrl& u : e->mimeData()->urls())
    if (u.isLocalFile()) paths << u.toLocalFile();
  if (!paths.isEmpty()) openAsync(paths);
}

void MainWindow::rememberRecent(const QStringList& paths) {
  QSettings settings("shardscope", "viewer");
  QStringList recent = settings.value("recent").toStringList();
  QString entry = paths.join('\n');
  recent.removeAll(entry);
  recent.prepend(entry);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue("recent", recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recent_->clear();
  QSettings settings("shardscope", "viewer");
  for (const QString& entry : settings.value("recent").toStringList()) {
    QStringList paths = entry.split('\n');
    recent_->addAction(paths.join(", "), this, [this, paths] { openAsync(paths); });
  }
  recent_->setEnabled(!recent_->isEmpty());
}

}  // namespace shardscope::viewer
