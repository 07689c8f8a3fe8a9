#include "viewer/app/main_window.h"

#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSettings>
#include <QTableView>
#include <QVBoxLayout>

#include "viewer/app/memory_chart_widget.h"
#include "viewer/app/overview_widget.h"
#include "viewer/app/panels.h"
#include "viewer/app/timeline_widget.h"
#include "viewer/model/event_args.h"
#include "viewer/model/palette.h"
#include "viewer/model/viewport.h"

namespace shardscope::viewer {

namespace {
constexpr int kMaxRecent = 8;

QTableView* make_table(QAbstractItemModel* model, QWidget* parent) {
  auto* view = new QTableView(parent);
  view->setModel(model);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view->verticalHeader()->hide();
  view->horizontalHeader()->setStretchLastSection(true);
  return view;
}

QString html_escape(std::string_view s) { return QString::fromUtf8(s.data(), qsizetype(s.size())).toHtmlEscaped(); }
}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("shardscope viewer"));
  setAcceptDrops(true);
  loader_ = new Loader(this);
  comparison_loader_ = new Loader(this);

  auto* central = new QWidget(this);
  auto* box = new QVBoxLayout(central);
  box->setContentsMargins(0, 0, 0, 0);
  box->setSpacing(0);
  banner_ = new QLabel(central);
  banner_->setObjectName("banner");
  banner_->setWordWrap(true);
  banner_->setStyleSheet("QLabel { background: #FFF3CD; color: #664D03; padding: 4px; }");
  banner_->hide();
  progress_ = new QProgressBar(central);
  progress_->hide();
  timeline_ = new TimelineWidget(central);
  overview_ = new OverviewWidget(timeline_, central);
  box->addWidget(banner_);
  box->addWidget(progress_);
  box->addWidget(overview_);
  box->addWidget(timeline_, 1);
  setCentralWidget(central);

  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open files..."), QKeySequence::Open, this, [this] {
    QStringList files = QFileDialog::getOpenFileNames(this, tr("Open trace files"), {}, tr("Traces (*.json *.json.gz *.gz);;All files (*)"));
    if (!files.isEmpty()) openAsync(files);
  });
  file->addAction(tr("Open run &directory..."), this, [this] {
    QString dir = QFileDialog::getExistingDirectory(this, tr("Open run directory"));
    if (!dir.isEmpty()) openAsync({dir});
  });
  file->addAction(tr("Open for &comparison..."), this, [this] {
    QStringList files = QFileDialog::getOpenFileNames(this, tr("Open a second run (trace files) to compare with"), {},
                                                      tr("Traces (*.json *.json.gz *.gz);;All files (*)"));
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

  auto add_dock = [this](const QString& title, QWidget* w, Qt::DockWidgetArea area) {
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(title);
    dock->setWidget(w);
    addDockWidget(area, dock);
    return dock;
  };
  details_ = new QLabel(tr("Click an event to see it here."), this);
  details_->setObjectName("details");
  details_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  details_->setMinimumWidth(260);
  details_->setWordWrap(true);
  add_dock(tr("Event"), details_, Qt::RightDockWidgetArea);
  stats_ = new QLabel(tr("Shift+drag on the timeline to measure a range."), this);
  stats_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  stats_->setWordWrap(true);
  add_dock(tr("Range"), stats_, Qt::RightDockWidgetArea);

  prefetch_ = new PrefetchModel(this);
  steps_ = new StepModel(this);
  prefetch_view_ = make_table(prefetch_, this);
  step_view_ = make_table(steps_, this);
  QDockWidget* pd = add_dock(tr("Prefetch"), prefetch_view_, Qt::BottomDockWidgetArea);
  QDockWidget* sd = add_dock(tr("Steps"), step_view_, Qt::BottomDockWidgetArea);
  tabifyDockWidget(sd, pd);
  pd->raise();
  buildSearchBar();
  buildAnalysisDocks();

  connect(prefetch_view_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) { jumpToPrefetch(i.row()); });
  connect(step_view_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) { jumpToStep(i.row()); });
  connect(timeline_, &TimelineWidget::eventSelected, this, &MainWindow::showEventDetails);
  connect(timeline_, &TimelineWidget::rangeSelected, this, &MainWindow::showRangeStats);
  connect(loader_, &Loader::progress, this, [this](qint64 done, qint64 total, int, int) {
    // Bytes on disk; scaled to the bar's int range.
    progress_->setRange(0, 1000);
    progress_->setValue(total > 0 ? int(1000 * done / total) : 0);
  });
  connect(loader_, &Loader::finished, this, [this](const QStringList& paths) {
    progress_->hide();
    present(loader_->take(), paths);
  });
  connect(comparison_loader_, &Loader::finished, this, [this](const QStringList& paths) {
    progress_->hide();
    presentComparison(comparison_loader_->take(), paths);
  });
}

MainWindow::~MainWindow() {
  timeline_->setTimeline(nullptr);
  overview_->setTimeline(nullptr);
  comparison_timeline_->setTimeline(nullptr);
}

bool MainWindow::loading() const { return loader_->busy() || comparison_loader_->busy(); }

void MainWindow::warn(const QString& title, const QString& text) {
  if (warn_) warn_(title, text);
  else QMessageBox::warning(this, title, text);
}

void MainWindow::openAsync(const QStringList& paths) {
  if (loader_->busy()) return;
  progress_->setRange(0, 0);  // busy until the first report
  progress_->show();
  loader_->start(paths);
}

QString MainWindow::openSync(const QStringList& paths, QStringList* failures) {
  LoadOutcome o = load_run(paths);
  if (!o.run) return QString::fromStdString(o.error);
  run_paths_ = paths;
  if (failures)
    for (const plugins::FileFailure& f : o.run->failures) failures->push_back(QString::fromStdString(f.path + ": " + f.message));
  present(std::move(o), {});
  return {};
}

void MainWindow::present(LoadOutcome outcome, const QStringList& paths) {
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
  prefetch_->setRun(nullptr);
  steps_->setRun(nullptr);
  run_ = std::move(outcome.run);
  layout_ = std::make_unique<TimelineLayout>(run_->trace);
  range_index_.assign(run_->trace.ranks.size(), std::nullopt);
  timeline_->setTimeline(layout_.get());
  overview_->setTimeline(layout_.get());
  memory_chart_->setChart(memory_chart(run_->report));
  // A comparison made against the previous run no longer holds.
  comparison_timeline_->setTimeline(nullptr);
  comparison_layout_.reset();
  comparison_.reset();
  diff_->setPlainText(tr("File > Open for comparison: a second run, diffed against this one."));
  prefetch_->setRun(run_.get());
  steps_->setRun(run_.get());
  prefetch_view_->resizeColumnsToContents();
  step_view_->resizeColumnsToContents();

  // The banner: truncated ranks and the loader's warnings (ranks from different runs, guessed ranks, ...).
  QStringList lines;
  for (const model::Rank& r : run_->trace.ranks)
    if (r.truncated) lines << tr("Rank %1 is truncated (%2): it is shown up to where it ends.").arg(r.rank).arg(QString::fromStdString(r.source));
  for (const std::string& w : run_->warnings) lines << QString::fromStdString(w);
  for (const plugins::FileFailure& f : run_->failures) lines << tr("Not loaded: %1: %2").arg(QString::fromStdString(f.path), QString::fromStdString(f.message));
  banner_->setText(lines.join("\n"));
  banner_->setVisible(!lines.isEmpty());
  details_->setText(tr("Click an event to see it here."));
  setWindowTitle(tr("shardscope viewer — %1 ranks, %2 events").arg(run_->trace.ranks.size()).arg(layout_->events()));
}

void MainWindow::showEventDetails(uint32_t rank, uint32_t track, uint32_t index) {
  const RankView& rv = layout_->ranks()[rank];
  const model::Rank& r = *rv.rank;
  const model::Track& t = r.tracks[track];
  const model::Event& e = t.events[index];
  double origin = double(layout_->start_ns());
  QString kind = QString::fromUtf8(model::to_string(e.cls).data());
  if (e.coll != model::CollectiveKind::None) kind += " / " + QString::fromUtf8(model::to_string(e.coll).data());
  QString html = QStringLiteral("<b>%1</b><table>").arg(html_escape(r.str(e.name)));
  auto row = [&html](const QString& k, const QString& v) { html += "<tr><td>" + k + "</td><td>" + v + "</td></tr>"; };
  row(tr("rank"), QString::number(r.rank));
  row(tr("track"), QString::fromStdString(track_label(t)).toHtmlEscaped());
  row(tr("start"), format_ns(double(e.ts_ns) - origin));
  row(tr("duration"), format_ns(double(e.dur_ns)));
  row(tr("class"), kind);
  if (e.unit >= 0) row(tr("unit"), QString::number(e.unit));
  if (e.bytes != model::kUnknown) row(tr("bytes"), QLocale().toString(qlonglong(e.bytes)));
  if (e.group_size > 0) row(tr("group"), tr("%1 ranks").arg(e.group_size));
  if (e.step >= 0 && size_t(e.step) < r.steps.size()) row(tr("step"), QString::number(r.steps[size_t(e.step)].number));
  if (const model::LaunchLink* l = rv.index.launch_of({track, index})) {
    const model::Event& h = r.tracks[l->launch.track].events[l->launch.index];
    row(tr("launched by"), html_escape(r.str(h.name)) + " @ " + format_ns(double(h.ts_ns) - origin));
  }
  // The trace's own args, as it gave them.
  std::vector<ArgRow> args = arg_rows(r, rv.args, track, index);
  if (!args.empty()) html += "<tr><td colspan=\"2\"><b>" + tr("args") + "</b></td></tr>";
  for (const ArgRow& a : args) row(html_escape(a.key), html_escape(a.value));
  html += "</table>";
  details_->setText(html);
}

void MainWindow::showRangeStats(uint32_t rank, qint64 lo, qint64 hi) {
  if (!layout_ || rank >= range_index_.size()) return;
  if (!range_index_[rank]) range_index_[rank] = build_range_index(*layout_->ranks()[rank].rank);
  RangeStats s = range_stats(*range_index_[rank], lo, hi);
  QString html = tr("<b>rank %1</b>, %2 from %3<table>")
                     .arg(layout_->ranks()[rank].rank->rank)
                     .arg(format_ns(ns_span(lo, hi)), format_ns(ns_span(layout_->start_ns(), lo)));
  auto row = [&html](const QString& k, const QString& v) { html += "<tr><td>" + k + "</td><td>" + v + "</td></tr>"; };
  for (size_t c = 0; c < kClassCount; ++c)
    if (s.class_ns[c] > 0) row(QString::fromUtf8(model::to_string(model::IntervalClass(c)).data()), format_ns(double(s.class_ns[c])));
  auto pct = [](std::optional<double> v) { return v ? QString::number(*v, 'f', 1) + " %" : QStringLiteral("n/a"); };
  row(tr("overlap of comm."), pct(s.window.overlap_pct()));
  row(tr("exposed comm."), format_ns(double(s.window.exposed_ns())));
  row(tr("idle"), pct(s.window.idle_pct()));
  html += "</table>";
  stats_->setText(html);
}

void MainWindow::jumpToPrefetch(int row) {
  const PrefetchModel::Item& it = prefetch_->item(row);
  const metrics::UnitPrefetch& u = *it.unit;
  int64_t lo = std::min(u.ag_start_ns, u.compute_start_ns), hi = std::max(u.ag_end_ns, u.compute_end_ns);
  if (u.all_gather.valid()) {
    model::EventRef ag{uint32_t(u.all_gather.track), uint32_t(u.all_gather.index)};
    timeline_->zoomTo(lo, hi, it.rank, ag.track);
    timeline_->select(Selection{it.rank, ag});
    showEventDetails(it.rank, ag.track, ag.index);
  }
}

void MainWindow::jumpToStep(int row) {
  const StepModel::Item& it = steps_->item(row);
  const RankView& rv = layout_->ranks()[it.rank];
  // Scroll to the rank's first track row.
  for (uint32_t t = 0; t < rv.rank->tracks.size(); ++t)
    if (layout_->row_of_track(it.rank, t) >= 0) {
      timeline_->zoomTo(it.step->step.start_ns, it.step->step.end_ns, it.rank, t);
      break;
    }
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
        if (rank.tracks[t].events[i].name == id) {
          jumpToEvent(r, {t, i});
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
