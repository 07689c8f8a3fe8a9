// The window's parts beyond the timeline's basics: the search bar, the memory and comparison docks, the Help
// menu, and moving the view to an event.
#include <QDockWidget>
#include <QFontDatabase>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QShortcut>
#include <QAction>
#include <QMenu>
#include <QMenuBar>
#include <QTextBrowser>
#include <QToolBar>

#include <algorithm>

#include "analyzer/analysis/diff.h"
#include "viewer/app/main_window.h"
#include "viewer/app/docks/comparison_dock.h"
#include "viewer/app/docks/memory_dock.h"
#include "viewer/app/step_lock.h"
#include "viewer/app/timeline_widget.h"
#include "viewer/model/keymap.h"

namespace shardscope::viewer {

void MainWindow::buildSearchBar() {
  QToolBar* bar = addToolBar(tr("Search"));
  bar->setObjectName("search");
  bar->setMovable(false);
  search_edit_ = new QLineEdit(bar);
  search_edit_->setObjectName("searchEdit");
  search_edit_->setPlaceholderText(tr("Search event names (Ctrl+F; Enter: next, Shift+Enter: previous)"));
  search_edit_->setClearButtonEnabled(true);
  search_edit_->setMaximumWidth(420);
  bar->addWidget(search_edit_);
  bar->addAction(tr("Previous"), this, [this] { searchStep(false); });
  bar->addAction(tr("Next"), this, [this] { searchStep(true); });
  search_count_ = new QLabel(bar);
  search_count_->setObjectName("searchCount");
  search_count_->setContentsMargins(8, 0, 8, 0);
  bar->addWidget(search_count_);
  // Rows by name: a filter over the timeline's row labels (matching rows show even in folded groups).
  auto* row_filter = new QLineEdit(bar);
  row_filter->setObjectName("rowFilter");
  row_filter->setPlaceholderText(tr("Filter rows by name"));
  row_filter->setClearButtonEnabled(true);
  row_filter->setMaximumWidth(220);
  bar->addWidget(row_filter);
  connect(row_filter, &QLineEdit::textChanged, timeline_, &TimelineWidget::setRowFilter);

  new QShortcut(QKeySequence::Find, this, [this] {
    search_edit_->setFocus();
    search_edit_->selectAll();
  });
  new QShortcut(QKeySequence::FindNext, this, [this] { searchStep(true); });
  new QShortcut(QKeySequence::FindPrevious, this, [this] { searchStep(false); });
  connect(search_edit_, &QLineEdit::returnPressed, this, [this] {
    // Enter on new text searches; on the same text it steps to the next hit.
    if (search_edit_->text().toStdString() != search_text_) search(search_edit_->text());
    else
      searchStep(true);
  });
  search_edit_->installEventFilter(this);  // Shift+Enter: the previous hit
  // Clearing the box (its clear button, or deleting the text) clears the hits, their outlines and the count.
  connect(search_edit_, &QLineEdit::textChanged, this, [this](const QString& text) {
    if (text.isEmpty() && !search_text_.empty()) search(QString());
  });
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
  if (watched == keyboard_help_ && event->type() == QEvent::KeyPress &&
      static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape) {
    keyboard_help_->hide();
    return true;
  }
  if (watched == search_edit_ && event->type() == QEvent::KeyPress) {
    auto* key = static_cast<QKeyEvent*>(event);
    if (key->key() == Qt::Key_Escape && closeOverlay()) return true;  // the search box's Esc closes the search
    if ((key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) && (key->modifiers() & Qt::ShiftModifier) &&
        search_edit_->text().toStdString() == search_text_) {
      searchStep(false);
      return true;
    }
  }
  return QMainWindow::eventFilter(watched, event);
}

void MainWindow::buildAnalysisDocks() {
  auto* md = new MemoryDock(selection_, this);
  memory_chart_ = md->chart();
  addDock(md, Qt::BottomDockWidgetArea);

  comparison_dock_ = new ComparisonDock(this);
  QDockWidget* dd = addDock(comparison_dock_, Qt::BottomDockWidgetArea);

  // Run B's timeline selects within run B: a selection model of its own, which no dock reads.
  comparison_selection_ = new SelectionModel(this);
  comparison_timeline_ = new TimelineWidget(comparison_selection_, this);
  comparison_timeline_->setObjectName("comparisonTimeline");
  auto* bd = new QDockWidget(tr("Run B"), this);
  bd->setObjectName("Run B");
  bd->setWidget(comparison_timeline_);
  addDockWidget(Qt::BottomDockWidgetArea, bd);
  step_lock_ = new StepLock(timeline_, comparison_timeline_, this);

  // Beside the prefetch and step tables, as tabs; the prefetch check stays in front.
  if (auto* steps = findChild<QDockWidget*>("Steps")) {
    tabifyDockWidget(steps, md);
    tabifyDockWidget(steps, dd);
    tabifyDockWidget(steps, bd);
  }
  if (auto* prefetch = findChild<QDockWidget*>("Prefetch")) prefetch->raise();
}

void MainWindow::jumpToEvent(uint32_t r, model::EventRef ref) {
  const model::Rank& rank = *layout_->ranks()[r].rank;
  const model::Event& e = rank.tracks[ref.track].events[ref.index];
  int64_t lo = e.ts_ns;
  // Show the host call that launched it too, so the launch arrow has both ends in view.
  if (const model::LaunchLink* l = layout_->ranks()[r].index.launch_of(ref))
    lo = std::min(lo, rank.tracks[l->launch.track].events[l->launch.index].ts_ns);
  timeline_->zoomTo(lo, e.end_ns(), r, ref.track);
  selection_->setEvent(EventSelection{r, ref});
}

void MainWindow::search(const QString& text) {
  search_text_ = text.toStdString();
  hit_.reset();
  search_ = layout_ ? search_names(*layout_, search_text_) : SearchResult{};
  selection_->setHighlights(search_.hits.empty() ? nullptr : &search_);
  if (search_.hits.empty()) {
    search_count_->setText(text.isEmpty() ? QString() : tr("no event matches"));
    return;
  }
  // Start from the view: the first hit at or after its left edge.
  double start = timeline_->viewport().start_ns;
  auto it = std::lower_bound(search_.hits.begin(), search_.hits.end(), start,
                             [](const SearchHit& h, double t) { return double(h.ts_ns) < t; });
  hit_ = it == search_.hits.end() ? 0 : size_t(it - search_.hits.begin());
  showHit();
}

void MainWindow::searchStep(bool forward) {
  if (search_.hits.empty()) return;
  hit_ = step_hit(search_, hit_, forward);
  showHit();
}

void MainWindow::showHit() {
  const SearchHit& h = search_.hits[*hit_];
  search_count_->setText(tr("%1 of %2").arg(*hit_ + 1).arg(search_.hits.size()));
  jumpToEvent(h.rank, h.event);
}

void MainWindow::openComparisonAsync(const QStringList& paths) {
  if (!run_) {
    warn(tr("Nothing to compare with"), tr("Open a run first, then a second run to compare with it."));
    return;
  }
  if (loading()) return;
  comparison_loader_->start(paths);
}

QString MainWindow::openComparisonSync(const QStringList& paths) {
  if (!run_) return tr("Open a run first, then a second run to compare with it.");
  LoadOutcome o = load_run(paths);
  if (!o.run) return QString::fromStdString(o.error);
  presentComparison(std::move(o), paths);
  return {};
}

void MainWindow::presentComparison(LoadOutcome outcome, const QStringList& paths) {
  if (outcome.cancelled) return;  // the user stopped it: the open comparison stays
  if (!outcome.run) {
    warn(tr("Could not open for comparison"), QString::fromStdString(outcome.error));
    return;
  }
  if (!run_) return;
  // B's own whole-run view on loading is not followed: B takes A's view, by step, once it is in.
  step_lock_->setEnabled(false);
  comparison_timeline_->setTimeline(nullptr);
  comparison_selection_->setRun(nullptr, nullptr);
  comparison_ = std::move(outcome.run);
  comparison_paths_ = paths;
  comparison_layout_ = std::make_unique<TimelineLayout>(comparison_->trace);
  comparison_timeline_->setTimeline(comparison_layout_.get());
  comparison_selection_->setRun(comparison_.get(), comparison_layout_.get());
  step_lock_->setEnabled(true);
  step_lock_->follow();
  comparison_dock_->setDiff(analysis::diff_runs(*run_, *comparison_), run_paths_, paths);
  comparison_dock_->raise();
  if (!comparison_->failures.empty()) {
    QString text = tr("These files of the comparison run did not load; the diff uses the others:");
    for (const plugins::FileFailure& f : comparison_->failures)
      text += "\n\n" + QString::fromStdString(f.path) + ": " + QString::fromStdString(f.message);
    warn(tr("Some files did not load"), text);
  }
}

void MainWindow::buildHelpMenu() {
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->setObjectName("helpMenu");
  QAction* keys =
      help->addAction(tr("&Keyboard map"), QKeySequence::HelpContents, this, [this] { showKeyboardHelp(); });
  keys->setObjectName("keyboardMapAction");
}

QWidget* MainWindow::showKeyboardHelp() {
  if (!keyboard_help_) {
    // A tool window, not a modal dialog: it can stay open beside the timeline while the keys are tried.
    auto* browser = new QTextBrowser(this);
    browser->setWindowFlags(Qt::Tool);
    browser->setObjectName("keyboardHelp");
    browser->setWindowTitle(tr("Keyboard map"));
    QString html = "<table cellpadding=\"3\">";
    for (const KeyBinding& k : keyboard_map())
      html += "<tr><td><b>" + QString::fromUtf8(k.keys).toHtmlEscaped() + "</b></td><td>" +
              QString::fromUtf8(k.action).toHtmlEscaped() + "</td></tr>";
    browser->setHtml(html + "</table>");
    browser->resize(460, 420);
    browser->installEventFilter(this);  // Esc closes it (eventFilter), as it closes the search
    keyboard_help_ = browser;
  }
  keyboard_help_->show();
  keyboard_help_->raise();
  return keyboard_help_;
}

}  // namespace shardscope::viewer
