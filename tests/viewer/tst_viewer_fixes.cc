// Small things that used to stick: clearing the search box clears the hits and their outlines; Esc clears a
// measured range (timeline, shared selection and Range dock); pan and zoom stop at the trace's ends; a
// search matching most events, zoomed out, marks its hits without blacking out the marks under them.
#include <QtTest>

#include <QLabel>
#include <QLineEdit>
#include <QStandardPaths>

#include "viewer/app/docks/range_dock.h"
#include "viewer/app/main_window.h"
#include "viewer/app/timeline_widget.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {
const QString kGolden = SHARDSCOPE_SOURCE_DIR "/tests/golden/";
}

class TestViewerFixes : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void clearingTheSearchBoxClearsTheSearch() {
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(w.openSync({kGolden + "kineto_two_ranks"}, nullptr).isEmpty());
    auto* edit = w.findChild<QLineEdit*>("searchEdit");
    auto* count = w.findChild<QLabel*>("searchCount");
    QVERIFY(edit && count);
    edit->setFocus();
    QTest::keyClicks(edit, "nccl");
    QTest::keyClick(edit, Qt::Key_Return);
    QVERIFY(!w.searchResult().hits.empty());
    QVERIFY(w.currentHit());
    QVERIFY(w.selection()->highlights());
    QVERIFY(!count->text().isEmpty());
    // Deleting the text, as a user does (select all, delete).
    QTest::keyClick(edit, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClick(edit, Qt::Key_Delete);
    QVERIFY(edit->text().isEmpty());
    QVERIFY(w.searchResult().hits.empty());
    QVERIFY(!w.currentHit());
    QVERIFY(!w.selection()->highlights());
    QVERIFY(count->text().isEmpty());
    // The next Enter with new text searches afresh.
    QTest::keyClicks(edit, "nccl");
    QTest::keyClick(edit, Qt::Key_Return);
    QVERIFY(!w.searchResult().hits.empty());
  }

  void escClearsTheMeasuredRange() {
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openSync({kGolden + "gpu_demo/gpu_demo.json.gz"}, nullptr).isEmpty());
    TimelineWidget* t = w.timeline();
    auto* dock = w.findChild<RangeDock*>();
    QVERIFY(dock);
    const QString hint = dock->text();
    // Shift+drag across a rank's first track row.
    const Row* track_row = nullptr;
    for (const Row& r : t->rows())
      if (r.kind == RowKind::Track && !track_row) track_row = &r;
    QVERIFY(track_row);
    int y = TimelineWidget::kRulerHeight + track_row->y + 4;
    QPoint a(TimelineWidget::kLabelWidth + 100, y), b(TimelineWidget::kLabelWidth + 500, y);
    QTest::mousePress(t, Qt::LeftButton, Qt::ShiftModifier, a);
    QTest::mouseMove(t, b);
    QTest::mouseRelease(t, Qt::LeftButton, Qt::ShiftModifier, b);
    QVERIFY(w.selection()->range());
    QVERIFY(dock->text() != hint);
    t->setFocus();
    QTest::keyClick(t, Qt::Key_Escape);
    QVERIFY(!w.selection()->range());
    QCOMPARE(dock->text(), hint);
    // F now has no range to zoom to: the view stays.
    Viewport before = t->viewport();
    QTest::keyClick(t, Qt::Key_F);
    QCOMPARE(t->viewport().start_ns, before.start_ns);
  }

  void panAndZoomStopAtTheEnds() {
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openSync({kGolden + "gpu_demo/gpu_demo.json.gz"}, nullptr).isEmpty());
    TimelineWidget* t = w.timeline();
    const TimelineLayout& layout = *t->timelineLayout();
    const double lo = double(layout.start_ns()), hi = double(layout.end_ns()), whole = hi - lo;
    const double eps = 1e-6 * whole;
    t->setFocus();
    // Zooming out stops at the whole run, by key and by wheel.
    for (int i = 0; i < 20; ++i) QTest::keyClick(t, Qt::Key_S);
    QVERIFY(t->viewport().end_ns() - t->viewport().start_ns <= whole + eps);
    QVERIFY(t->viewport().start_ns >= lo - eps && t->viewport().end_ns() <= hi + eps);
    QWheelEvent out(QPointF(600, 300), t->mapToGlobal(QPointF(600, 300)), {}, QPoint(0, -1200), Qt::NoButton, {},
                    Qt::NoScrollPhase, false);
    QApplication::sendEvent(t, &out);
    QVERIFY(t->viewport().end_ns() - t->viewport().start_ns <= whole + eps);
    // Zoomed in, panning stops at either end, by key and by drag.
    for (int i = 0; i < 10; ++i) QTest::keyClick(t, Qt::Key_W);
    const double span = t->viewport().end_ns() - t->viewport().start_ns;
    QVERIFY(span < whole / 5);
    for (int i = 0; i < 200; ++i) QTest::keyClick(t, Qt::Key_A);
    QVERIFY(std::abs(t->viewport().start_ns - lo) <= eps);
    for (int i = 0; i < 200; ++i) QTest::keyClick(t, Qt::Key_D);
    QVERIFY(std::abs(t->viewport().end_ns() - hi) <= eps);
    QVERIFY(std::abs(t->viewport().end_ns() - t->viewport().start_ns - span) <= eps);  // panning keeps the zoom
    QPoint from(TimelineWidget::kLabelWidth + 100, 60);
    QTest::mousePress(t, Qt::LeftButton, {}, from);
    for (int i = 1; i <= 10; ++i) QTest::mouseMove(t, from - QPoint(i * 80, 0));  // dragging left pans right
    QTest::mouseRelease(t, Qt::LeftButton, {}, from - QPoint(800, 0));
    QVERIFY(t->viewport().end_ns() <= hi + eps);
  }

  void manyHitsDoNotBecomeBlobs() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openSync({kGolden + "kineto_two_ranks"}, nullptr).isEmpty());
    TimelineWidget* t = w.timeline();
    auto dark_in_plot = [&] {
      QImage img(t->size(), QImage::Format_RGB32);
      t->render(&img);
      int n = 0;
      for (int y = TimelineWidget::kRulerHeight; y < img.height(); ++y)
        for (int x = TimelineWidget::kLabelWidth; x < img.width(); ++x) n += qGray(img.pixel(x, y)) < 60;
      return n;
    };
    const int before = dark_in_plot();
    // "a" is in nearly every name: thousands of hits, most a pixel or two wide at this zoom.
    w.search("a");
    QVERIFY(w.searchResult().hits.size() > 5000);
    t->zoomToAll();
    const int after = dark_in_plot();
    const int plot = (t->width() - TimelineWidget::kLabelWidth) * (t->height() - TimelineWidget::kRulerHeight);
    QVERIFY2(after > before, "the hits are marked");
    QVERIFY2(after - before < plot / 20,
             qPrintable(QString("%1 dark pixels added of %2").arg(after - before).arg(plot)));
  }
};

QTEST_MAIN(TestViewerFixes)
#include "tst_viewer_fixes.moc"
