// Ranks side by side, the A/B table and run B following A, in the window on the golden CPU trainer runs: a
// Prefetch row's double-click lands the Ranks dock on that all-gather with the late peer (rank 0, the rank
// the straggler analysis names last there) marked and drawn later; a collective clicked in the timeline does
// the same; the Comparison dock's rows carry numbers and no paths; run B's view follows A's step by step.
#include <QtTest>

#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QStandardPaths>
#include <QTableView>

#include "viewer/app/docks/comparison_dock.h"
#include "viewer/app/docks/prefetch_dock.h"
#include "viewer/app/docks/ranks_dock.h"
#include "viewer/app/main_window.h"
#include "viewer/app/panels.h"
#include "viewer/app/timeline_widget.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {

const QString kGolden = SHARDSCOPE_SOURCE_DIR "/tests/golden/";

void double_click(QTableView* view, QPoint at) {
  QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
  QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, at);
}

const model::Step& step_numbered(const model::Rank& r, int64_t n) {
  for (const model::Step& s : r.steps)
    if (s.number == n) return s;
  return r.steps.front();
}

// The step shown at `ns`: the last to start at or before it.
const model::Step& step_at(const model::Rank& r, double ns) {
  const model::Step* at = &r.steps.front();
  for (const model::Step& s : r.steps)
    if (double(s.start_ns) <= ns) at = &s;
  return *at;
}

// Clicks an event on the timeline as a user does: zoomed to it, in the middle of where it is drawn; the
// click writes it into the window's selection model.
void click_event(MainWindow& w, uint32_t rank, model::EventRef ref) {
  TimelineWidget* t = w.timeline();
  const model::Event& e = t->timelineLayout()->ranks()[rank].rank->tracks[ref.track].events[ref.index];
  t->zoomTo(e.ts_ns, e.end_ns(), rank, ref.track);
  std::optional<QRectF> r = t->eventRect(rank, ref);
  QVERIFY(r);
  QTest::mouseClick(t, Qt::LeftButton, {}, r->center().toPoint());
  QVERIFY(w.selection()->event());
  QVERIFY(w.selection()->event()->event == ref);
}
}  // namespace

class TestViewerRanks : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void prefetchRowLandsOnTheInstanceWithTheLatePeerMarked() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.openSync({kGolden + "trainer_cpu_2ranks/pre"}, nullptr).isEmpty());
    auto* pd = w.findChild<PrefetchDock*>();
    auto* rd = w.findChild<RanksDock*>();
    QVERIFY(pd && rd);
    QVERIFY(!rd->instance());  // a step until asked
    // Rank 1, step 2, unit 4: rank 0 joined its all-gather late (tests/golden/trainer_cpu_2ranks/README.md).
    int view_row = -1;
    for (int v = 0; v < pd->model()->rowCount(); ++v) {
      const PrefetchModel::Item& it = pd->model()->item(pd->sourceRow(v));
      if (it.rank == 1 && it.step->step == 2 && it.unit->unit == 4) view_row = v;
    }
    QVERIFY(view_row >= 0);
    const metrics::UnitPrefetch& u = *pd->model()->item(pd->sourceRow(view_row)).unit;
    QCOMPARE(u.late_peer, 0);
    pd->raise();
    QTableView* t = pd->table();
    t->scrollTo(t->model()->index(view_row, 0));
    double_click(t, t->visualRect(t->model()->index(view_row, 1)).center());

    QVERIFY(rd->instance());
    AcrossRanks across(*w.run());
    QCOMPARE(*rd->instance(), *across.instance_of(1, {uint32_t(u.all_gather.track), uint32_t(u.all_gather.index)}));
    QCOMPARE(rd->instance()->kind, model::CollectiveKind::AllGather);
    // The straggler analysis names rank 0 last at this instance: its row is marked last and late peer.
    const metrics::StragglerInstance* s = across.straggler(*rd->instance());
    QVERIFY(s);
    QCOMPARE(s->last_rank, 0);
    const std::vector<RankRow>& rows = rd->rows();
    QCOMPARE(rows.size(), size_t(2));
    QVERIFY(rows[0].last && rows[0].late_peer);
    QVERIFY(!rows[1].last && !rows[1].late_peer);
    QVERIFY(rd->note()->text().contains("rank 0 arrived last"));
    // In front, and the late rank's all-gather drawn to the right of the other's.
    QVERIFY(rd->isVisible());
    QVERIFY(!rd->view()->visibleRegion().isEmpty());
    std::optional<QRectF> r0 = rd->view()->instanceRect(0), r1 = rd->view()->instanceRect(1);
    QVERIFY(r0 && r1);
    QVERIFY2(r0->left() > r1->left() + 1, qPrintable(QString("%1 vs %2").arg(r0->left()).arg(r1->left())));
    // Back to a step: each rank's step start at 0, no instance.
    rd->alignOnStep(1);
    QVERIFY(!rd->instance());
    for (const RankRow& row : rd->rows())
      QCOMPARE(*row.origin_ns, step_numbered(w.run()->trace.ranks[row.rank], 1).start_ns);
  }

  void collectiveClickedInTheTimelineAlignsTheRanks() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.openSync({kGolden + "trainer_cpu_2ranks/pre"}, nullptr).isEmpty());
    auto* rd = w.findChild<RanksDock*>();
    AcrossRanks across(*w.run());
    // Every matched instance where rank 1 arrived last, clicked on rank 0: rank 1's row is marked last.
    const model::Rank& r0 = w.run()->trace.ranks[0];
    int checked = 0;
    for (uint32_t t = 0; t < r0.tracks.size() && checked < 3; ++t)
      for (uint32_t i = 0; i < r0.tracks[t].events.size() && checked < 3; ++i) {
        std::optional<metrics::InstanceId> id = across.instance_of(0, {t, i});
        if (!id || !across.straggler(*id) || across.straggler(*id)->last_rank != 1) continue;
        click_event(w, 0, {t, i});
        QVERIFY(rd->instance());
        QCOMPARE(*rd->instance(), *id);
        // Worst first: rank 1, the last arrival, is the first row.
        QCOMPARE(rd->rows()[0].rank, 1u);
        QVERIFY(rd->rows()[0].last);
        QVERIFY(!rd->rows()[1].last);
        ++checked;
      }
    QCOMPARE(checked, 3);
    // A compute slice does not move the dock.
    const metrics::InstanceId before = *rd->instance();
    for (uint32_t t = 0; t < r0.tracks.size(); ++t)
      if (!r0.tracks[t].events.empty() && r0.tracks[t].events[0].cls == model::IntervalClass::Compute) {
        click_event(w, 0, {t, 0});
        break;
      }
    QCOMPARE(*rd->instance(), before);
  }

  void comparisonTableHasNumbersAndNoPaths() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.openSync({kGolden + "trainer_cpu_2ranks/none"}, nullptr).isEmpty());
    QVERIFY(w.openComparisonSync({kGolden + "trainer_cpu_2ranks/pre"}).isEmpty());
    ComparisonDock* cd = w.comparisonDock();
    QTableView* t = cd->table();
    QAbstractItemModel* m = t->model();
    QVERIFY(m->rowCount() > 20);
    QCOMPARE(m->headerData(ComparisonModel::A, Qt::Horizontal).toString(), QString("A"));
    QCOMPARE(m->headerData(ComparisonModel::B, Qt::Horizontal).toString(), QString("B"));
    QVERIFY(m->headerData(ComparisonModel::A, Qt::Horizontal, Qt::ToolTipRole)
                .toString()
                .contains(kGolden + "trainer_cpu_2ranks/none"));
    int numbers = 0;
    for (int r = 0; r < m->rowCount(); ++r) {
      for (int c = 0; c < m->columnCount(); ++c) {
        QString cell = m->index(r, c).data().toString();
        QVERIFY2(!cell.contains(SHARDSCOPE_SOURCE_DIR) && !cell.contains("golden"), qPrintable(cell));
      }
      bool ok_a = false, ok_b = false;
      m->index(r, ComparisonModel::A).data().toString().toDouble(&ok_a);
      m->index(r, ComparisonModel::B).data().toString().toDouble(&ok_b);
      numbers += ok_a && ok_b;
    }
    QVERIFY(numbers > 20);
    QVERIFY(!cd->note()->text().contains('/'));
    // "mean step time ms": 351.659 in A, 457.971 in B (`shardscope diff none pre --ranks` in
    // tests/golden/trainer_cpu_2ranks; diff_ranks_units.out has them the other way round).
    bool found = false;
    for (int r = 0; r < m->rowCount(); ++r)
      if (m->index(r, ComparisonModel::Metric).data().toString() == "mean step time ms" &&
          m->index(r, ComparisonModel::Rank).data().toString() == "0") {
        QCOMPARE(m->index(r, ComparisonModel::A).data().toString(), QString("351.659"));
        QCOMPARE(m->index(r, ComparisonModel::B).data().toString(), QString("457.971"));
        QVERIFY(m->index(r, ComparisonModel::Change).data().toString().startsWith("+106.312"));
        found = true;
      }
    QVERIFY(found);
    // Sorted by the change, as numbers.
    cd->raise();
    t->sortByColumn(ComparisonModel::Change, Qt::AscendingOrder);
    for (int r = 1; r < m->rowCount(); ++r)
      QVERIFY(m->index(r - 1, ComparisonModel::Change).data(kSortRole).toDouble() <=
              m->index(r, ComparisonModel::Change).data(kSortRole).toDouble());
  }

  void runBFollowsAByStep() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.openSync({kGolden + "trainer_cpu_2ranks/none"}, nullptr).isEmpty());
    QVERIFY(w.openComparisonSync({kGolden + "trainer_cpu_2ranks/pre"}).isEmpty());
    TimelineWidget *a = w.timeline(), *b = w.comparisonTimeline();
    const model::Rank &ra = *a->timelineLayout()->ranks()[0].rank, &rb = *b->timelineLayout()->ranks()[0].rank;
    auto check = [&](int64_t step) {
      const double into_a = a->viewport().start_ns - double(step_numbered(ra, step).start_ns);
      const double into_b = b->viewport().start_ns - double(step_numbered(rb, step).start_ns);
      QVERIFY2(std::abs(into_a - into_b) < 1.0, qPrintable(QString("%1 vs %2").arg(into_a).arg(into_b)));
      QCOMPARE(a->viewport().ns_per_px, b->viewport().ns_per_px);
    };
    // A at 1 ms into step 2, 10 µs a pixel: B 1 ms into its own step 2, at the same zoom.
    Viewport v = a->viewport();
    v.start_ns = double(step_numbered(ra, 2).start_ns) + 1e6;
    v.ns_per_px = 1e4;
    a->setViewport(v);
    check(2);
    v.start_ns = double(step_numbered(ra, 1).start_ns) + 5e6;
    a->setViewport(v);
    check(1);
    // Zooming B zooms A, and the steps stay lined up.
    b->zoomBy(0.5, 10);
    QCOMPARE(a->viewport().ns_per_px, 5e3);
    check(1);
  }

  void comparisonColumnsFitA1280Window() {
    // A 1280-wide window: Rank, A, B and Change are each as wide as their widest cell and all four in view;
    // Metric, sized to its longest device activity name (the H100 runs' CUDA kernel names run to hundreds
    // of characters), pushed them off-screen.
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QString h100 = SHARDSCOPE_SOURCE_DIR "/tests/data/h100_nccl2/";
    QVERIFY(w.openSync({h100 + "pytorch_fsdp1_backward_none"}, nullptr).isEmpty());
    QVERIFY(w.openComparisonSync({h100 + "pytorch_fsdp1_backward_pre"}).isEmpty());
    QCoreApplication::processEvents();
    QTableView* t = w.comparisonDock()->table();
    QVERIFY(t->isVisible());
    QAbstractItemModel* m = t->model();
    const QFontMetrics fm(t->font());
    const int view_w = t->viewport()->width();
    QVERIFY2(view_w > 600, qPrintable(QString::number(view_w)));
    for (int c :
         {int(ComparisonModel::Rank), int(ComparisonModel::A), int(ComparisonModel::B), int(ComparisonModel::Change)}) {
      const int x = t->horizontalHeader()->sectionViewportPosition(c), cw = t->columnWidth(c);
      QVERIFY2(x >= 0 && x + cw <= view_w,
               qPrintable(QString("column %1 at %2 + %3 of %4").arg(c).arg(x).arg(cw).arg(view_w)));
      int widest = 0;
      for (int r = 0; r < m->rowCount(); ++r)
        widest = std::max(widest, fm.horizontalAdvance(m->index(r, c).data().toString()));
      QVERIFY2(cw >= widest, qPrintable(QString("column %1: %2 px for %3 px of text").arg(c).arg(cw).arg(widest)));
    }
    // The metric has the rest, and its long names are cut in the middle.
    QVERIFY(t->columnWidth(ComparisonModel::Metric) >= 100);
    QCOMPARE(t->textElideMode(), Qt::ElideMiddle);
  }

  void raisingRunBMovesNothingAndAlignsByStep() {
    // Run B's tab raised first, A at its whole-run view: A keeps its view, B's first step starts at the
    // x of A's first step (B not held to its own start); then mid-run, and raised again.
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openSync({kGolden + "trainer_cpu_2ranks/none"}, nullptr).isEmpty());
    QVERIFY(w.openComparisonSync({kGolden + "trainer_cpu_2ranks/pre"}).isEmpty());
    QCoreApplication::processEvents();
    TimelineWidget *a = w.timeline(), *b = w.comparisonTimeline();
    const model::Rank &ra = *a->timelineLayout()->ranks()[0].rank, &rb = *b->timelineLayout()->ranks()[0].rank;
    auto* run_b = w.findChild<QDockWidget*>("Run B");
    QVERIFY(run_b);
    w.comparisonDock()->raise();
    QCoreApplication::processEvents();
    // A tab behind the Comparison dock: nothing of it on screen, and never laid out at the dock's size.
    QVERIFY(b->visibleRegion().isEmpty());
    const int hidden_width = b->width();
    const Viewport before = a->viewport();
    run_b->raise();
    QCoreApplication::processEvents();
    QVERIFY(!b->visibleRegion().isEmpty());
    QVERIFY2(b->width() != hidden_width, "raising the tab resized B (what moved A)");
    QCOMPARE(a->viewport().start_ns, before.start_ns);
    QCOMPARE(a->viewport().ns_per_px, before.ns_per_px);
    QCOMPARE(b->viewport().ns_per_px, a->viewport().ns_per_px);
    auto x_of_step = [](const TimelineWidget* t, const model::Step& s) {
      return t->viewport().x_of(double(s.start_ns));
    };
    const model::Step &a1 = ra.steps.front(), &b1 = step_numbered(rb, a1.number);
    QVERIFY2(std::abs(x_of_step(a, a1) - x_of_step(b, b1)) < 1e-6,
             qPrintable(QString("%1 vs %2").arg(x_of_step(a, a1)).arg(x_of_step(b, b1))));
    // Near the end (A held to its run's end) at 10 µs a pixel, the Comparison tab raised and B's again.
    Viewport v = a->viewport();
    v.start_ns = double(a->timelineLayout()->end_ns());
    v.ns_per_px = 1e4;
    a->setViewport(v);
    QVERIFY(a->viewport().end_ns() <= double(a->timelineLayout()->end_ns()) + 1);
    const model::Step& last = step_at(ra, a->viewport().start_ns);
    w.comparisonDock()->raise();
    QCoreApplication::processEvents();
    const Viewport mid = a->viewport();
    run_b->raise();
    QCoreApplication::processEvents();
    QCOMPARE(a->viewport().start_ns, mid.start_ns);
    QCOMPARE(a->viewport().ns_per_px, 1e4);
    QVERIFY(std::abs(x_of_step(a, last) - x_of_step(b, step_numbered(rb, last.number))) < 1e-6);
  }
};

QTEST_MAIN(TestViewerRanks)
#include "tst_viewer_ranks.moc"
