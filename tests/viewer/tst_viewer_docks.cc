// The docks with the headline numbers, in the window: the Steps dock's communication, exposed and idle
// shares checked against the report's numbers and sorted by a header click; the Prefetch dock's run verdict
// and warm-up note, rows that say whether their own all-gather hid (never "effective" on a 0 % hidden
// pair), sorting, a double-click jump, and the reason when there is nothing to check; the docks following
// the one shared selection.
#include <QtTest>

#include <QHeaderView>
#include <QLabel>
#include <QStandardPaths>
#include <QTableView>

#include "analyzer/report/prefetch_render.h"
#include "viewer/app/docks/event_dock.h"
#include "viewer/app/docks/prefetch_dock.h"
#include "viewer/app/docks/steps_dock.h"
#include "viewer/app/main_window.h"
#include "viewer/app/panels.h"
#include "viewer/app/timeline_widget.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {

const QString kGolden = SHARDSCOPE_SOURCE_DIR "/tests/golden/";

int column_named(QTableView* view, const QString& name) {
  for (int c = 0; c < view->model()->columnCount(); ++c)
    if (view->model()->headerData(c, Qt::Horizontal).toString() == name) return c;
  return -1;
}

// Clicks the header of `column` (the user's way of sorting).
void click_header(QTableView* view, int column) {
  QHeaderView* h = view->horizontalHeader();
  QPoint at(h->sectionViewportPosition(column) + h->sectionSize(column) / 2, h->height() / 2);
  QTest::mouseClick(h->viewport(), Qt::LeftButton, {}, at);
}

// A user's double-click: the press that picks the cell, then the double-click (QTest's alone does not press
// first, and an item view only reports a double-click on the cell it was pressed on).
void double_click(QTableView* view, QPoint at) {
  QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
  QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, at);
}

QString pct(double v) { return QString::number(v, 'f', 1) + " %"; }

}  // namespace

class TestViewerDocks : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void stepsDockShowsTheSharesAndSorts() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openSync({kGolden + "trainer_cpu_2ranks/pre"}, nullptr).isEmpty());
    auto* dock = w.findChild<StepsDock*>();
    QVERIFY(dock);
    dock->raise();
    QTableView* view = dock->table();
    const int exposed = column_named(view, "Exposed %"), comm = column_named(view, "Comm. %"),
              idle = column_named(view, "Idle");
    const int window = column_named(view, "Window");
    QVERIFY(exposed >= 0 && comm >= 0 && idle >= 0 && window >= 0);
    QVERIFY(view->model()->rowCount() >= 2);
    // Each row's shares are the report's step numbers over the step's window.
    for (int row = 0; row < view->model()->rowCount(); ++row) {
      const metrics::WindowMetrics& m = dock->model()->item(dock->sourceRow(row)).step->m;
      QVERIFY(m.window_ns > 0);
      QCOMPARE(view->model()->index(row, exposed).data().toString(),
               pct(100.0 * double(m.exposed_ns()) / double(m.window_ns)));
      QCOMPARE(view->model()->index(row, comm).data().toString(), pct(100.0 * double(m.comm_ns) / double(m.window_ns)));
      QCOMPARE(view->model()->index(row, idle).data().toString(), format_ns(double(m.idle_ns())));
    }
    // A click on the Window header sorts by the window's length as a number, both ways.
    click_header(view, window);
    auto windows = [&] {
      std::vector<qlonglong> v;
      for (int row = 0; row < view->model()->rowCount(); ++row)
        v.push_back(view->model()->index(row, window).data(kSortRole).toLongLong());
      return v;
    };
    std::vector<qlonglong> up = windows();
    QVERIFY(std::is_sorted(up.begin(), up.end()) || std::is_sorted(up.rbegin(), up.rend()));
    click_header(view, window);
    std::vector<qlonglong> down = windows();
    QVERIFY(down != up || up.front() == up.back());
    std::reverse(down.begin(), down.end());
    QCOMPARE(down, up);
    // A double-click zooms the timeline to that step (the sorted row's step, not the model's row).
    const report::StepRow& step = *dock->model()->item(dock->sourceRow(0)).step;
    QRect cell = view->visualRect(view->model()->index(0, window));
    double_click(view, cell.center());
    const Viewport& vp = w.timeline()->viewport();
    QVERIFY(vp.start_ns <= double(step.step.start_ns) && vp.end_ns() >= double(step.step.end_ns));
    QVERIFY(vp.end_ns() - vp.start_ns < 1.5 * double(step.step.end_ns - step.step.start_ns));
  }

  void prefetchDockGivesTheVerdictAndHonestRows() {
    for (const QString run : {"trainer_cpu_2ranks/pre", "trainer_cpu_2ranks/none"}) {
      MainWindow w;
      w.resize(1400, 900);
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      QVERIFY(w.openSync({kGolden + run}, nullptr).isEmpty());
      auto* dock = w.findChild<PrefetchDock*>();
      QVERIFY(dock);
      QTableView* view = dock->table();
      QVERIFY2(view->model()->rowCount() > 0, qPrintable(run));
      // The run's verdict per rank, as the report words it, with the warm-up note.
      const QString note = dock->note()->text();
      QVERIFY(dock->note()->isVisibleTo(dock));
      for (const report::RankReport& rr : w.run()->report.ranks)
        QVERIFY2(note.contains(QString::fromStdString(report::run_sentence(rr.prefetch))), qPrintable(note));
      if (!w.run()->report.ranks[0].prefetch.steps.empty() && w.run()->report.ranks[0].prefetch.steps.front().warm_up)
        QVERIFY2(note.contains("warm-up", Qt::CaseInsensitive), qPrintable(note));
      // No row calls a pair that hid under the threshold effective; each says whether its all-gather hid.
      const int hidden = column_named(view, "Hidden"), pair = column_named(view, "All-gather");
      QVERIFY(hidden >= 0 && pair >= 0);
      int exposed_rows = 0;
      for (int row = 0; row < view->model()->rowCount(); ++row) {
        const metrics::UnitPrefetch& u = *dock->model()->item(dock->sourceRow(row)).unit;
        const bool hid = u.hidden_share() >= metrics::kHiddenShareThreshold;
        exposed_rows += !hid;
        QCOMPARE(view->model()->index(row, pair).data().toString(), hid ? QString("hidden") : QString("exposed"));
        for (int c = 0; c < view->model()->columnCount(); ++c)
          QVERIFY2(!view->model()->index(row, c).data().toString().contains("effective"), qPrintable(run));
      }
      if (run.endsWith("none")) QVERIFY(exposed_rows > 0);  // no prefetch: some all-gathers are exposed
      // Sorting by the hidden share, by a header click.
      click_header(view, hidden);
      double prev = -1;
      bool ascending = true;
      for (int row = 0; row < view->model()->rowCount(); ++row) {
        double v = view->model()->index(row, hidden).data(kSortRole).toDouble();
        ascending = ascending && v >= prev;
        prev = v;
      }
      QVERIFY(ascending);
      // A double-click selects that row's all-gather on the timeline and in the Event dock.
      const metrics::UnitPrefetch& u = *dock->model()->item(dock->sourceRow(0)).unit;
      QVERIFY(u.all_gather.valid());
      double_click(view, view->visualRect(view->model()->index(0, hidden)).center());
      QVERIFY(w.selection()->event());
      QCOMPARE(w.selection()->event()->event.track, uint32_t(u.all_gather.track));
      QCOMPARE(w.selection()->event()->event.index, uint32_t(u.all_gather.index));
      QVERIFY(!w.findChild<EventDock*>()->name().isEmpty());
    }
  }

  void emptyPrefetchDockSaysWhy() {
    MainWindow w;
    QVERIFY(w.openSync({kGolden + "gpu_demo/gpu_demo.json.gz"}, nullptr).isEmpty());
    auto* dock = w.findChild<PrefetchDock*>();
    QVERIFY(dock);
    QCOMPARE(dock->table()->model()->rowCount(), 0);
    const metrics::RankPrefetch& p = w.run()->report.ranks[0].prefetch;
    QVERIFY(p.na != metrics::NotApplicable::None || p.steps.empty() || p.steps.front().units.empty());
    QString note = dock->note()->text();
    QVERIFY2(note.contains("nothing to check"), qPrintable(note));
    if (p.na != metrics::NotApplicable::None)
      QVERIFY2(note.contains(QString::fromStdString(report::na_sentence(p.na, 0))), qPrintable(note));
  }

  void docksFollowTheSharedSelection() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openSync({kGolden + "gpu_demo/gpu_demo.json.gz"}, nullptr).isEmpty());
    SelectionModel* sel = w.selection();
    QCOMPARE(sel->run(), w.run());
    QVERIFY(!sel->event());
    // A click on a slice: the selection holds it and the Event dock names it.
    QVERIFY(w.selectByName(
        QString::fromUtf8(w.run()->trace.ranks[0].str(w.run()->trace.ranks[0].tracks[0].events[0].name))));
    auto picked = sel->event();
    QVERIFY(picked);
    auto rect = w.timeline()->eventRect(picked->rank, picked->event);
    QVERIFY(rect);
    sel->setEvent(std::nullopt);
    auto* dock = w.findChild<EventDock*>();
    QVERIFY(dock->name().isEmpty());
    QTest::mouseClick(w.timeline(), Qt::LeftButton, {}, rect->center().toPoint());
    QVERIFY(sel->event());
    QCOMPARE(sel->event()->event.track, picked->event.track);
    QCOMPARE(sel->event()->event.index, picked->event.index);
    QVERIFY(!dock->name().isEmpty());
  }
};

QTEST_MAIN(TestViewerDocks)
#include "tst_viewer_docks.moc"
