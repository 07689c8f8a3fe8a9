// Any rank count fits the screen: 1,024 generated ranks opened from their traces, the window's minimum size
// within a 1280x800 screen (no dock's minimum grows with the ranks: their per-rank content scrolls), and
// the Ranks dock, aligned on a collective, showing the rank the straggler analysis names last without
// scrolling (worst first).
#include <QtTest>

#include <QScrollArea>
#include <QScrollBar>
#include <QStandardPaths>
#include <QTemporaryDir>

#include "viewer/app/docks/ranks_dock.h"
#include "viewer/app/main_window.h"
#include "viewer/app/selection_model.h"
#include "viewer/bench/generated_files.h"
#include "viewer/model/across_ranks.h"

using namespace shardscope;
using namespace shardscope::viewer;

class TestViewerFit : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void aThousandRanksFitTheScreenWithTheLateRankInView() {
    constexpr int kRanks = 1024;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // 40 events a rank: host ranges, launches, kernels and one all-gather each (generated_files.h).
    bench::write_generated_run(dir.path().toStdString(), size_t(40) * kRanks, kRanks, false);
    MainWindow w;
    w.resize(1280, 800);
    w.show();
    QVERIFY(w.openSync({dir.path()}, nullptr).isEmpty());
    QCOMPARE(int(w.run()->trace.ranks.size()), kRanks);
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QCoreApplication::processEvents();

    // The window's least size fits a 1280x800 screen, whatever the docks hold.
    const QSize least = w.minimumSizeHint().expandedTo(w.minimumSize());
    QVERIFY2(least.width() <= 1280 && least.height() <= 800,
             qPrintable(QString("minimum %1x%2").arg(least.width()).arg(least.height())));

    // Rank 0's all-gather across ranks: the straggler analysis's last arrival is the first row, in view.
    const model::Rank& r0 = w.run()->trace.ranks[0];
    std::optional<model::EventRef> gather;
    for (uint32_t t = 0; t < r0.tracks.size() && !gather; ++t)
      for (uint32_t i = 0; i < r0.tracks[t].events.size() && !gather; ++i)
        if (r0.tracks[t].events[i].coll == model::CollectiveKind::AllGather) gather = model::EventRef{t, i};
    QVERIFY(gather);
    auto* rd = w.findChild<RanksDock*>();
    QVERIFY(rd);
    w.selection()->showAcrossRanks(0, *gather);
    QVERIFY(rd->instance());
    AcrossRanks across(*w.run());
    const metrics::StragglerInstance* s = across.straggler(*rd->instance());
    QVERIFY(s);
    QVERIFY(s->last_rank != 0);  // not the asking rank: a rank found by the analysis, not by where we started
    QCoreApplication::processEvents();
    int late_row = -1;
    for (size_t i = 0; i < rd->rows().size(); ++i)
      if (w.run()->trace.ranks[rd->rows()[i].rank].rank == s->last_rank) late_row = int(i);
    QVERIFY(late_row >= 0);
    QVERIFY(rd->rows()[size_t(late_row)].last);
    std::optional<QRectF> r = rd->view()->instanceRect(size_t(late_row));
    QVERIFY(r);
    // Drawn where the dock shows it now, with no scrolling.
    const QRect seen = rd->view()->visibleRegion().boundingRect();
    QVERIFY2(seen.contains(r->center().toPoint()), qPrintable(QString("late rank %1 at row %2, y %3; visible %4..%5")
                                                                  .arg(s->last_rank)
                                                                  .arg(late_row)
                                                                  .arg(r->center().y())
                                                                  .arg(seen.top())
                                                                  .arg(seen.bottom())));
    // Every later arrival drawn below it: worst first, by arrival.
    if (late_row + 1 < int(rd->rows().size()))
      if (std::optional<QRectF> next = rd->view()->instanceRect(size_t(late_row + 1)))
        QVERIFY(next->left() <= r->left());
  }
};

QTEST_MAIN(TestViewerFit)
#include "tst_viewer_fit.moc"
