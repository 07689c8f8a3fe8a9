// Perfetto's habits in the window, on a small hand-written trace: M marks the selected event, the measured
// range or the event under the cursor (and M again unmarks, View > Clear marks clears), `/` focuses the
// search box (which still takes a typed "/"), `?` opens the keyboard map and Esc closes it and the search,
// and a Shift+drag across two stream rows fills the Area dock, whose Ctrl+C puts the rows on the clipboard
// as tab-separated text; the numbers are worked out from the trace below.
#include <QtTest>

#include <QAction>
#include <QClipboard>
#include <QLineEdit>
#include <QMenuBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>

#include <algorithm>
#include <cmath>

#include "viewer/app/docks/area_dock.h"
#include "viewer/app/main_window.h"
#include "viewer/app/timeline_widget.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {

// Kineto JSON, times in µs: stream 7 runs gemm [100, 150), gemm [200, 230), nccl [300, 420); stream 8 runs
// gemm [150, 170) and, far after the area, copy [1000, 1010).
constexpr char kTrace[] = R"({"traceEvents": [
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 100, "dur": 50, "args": {"stream": 7}},
{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 200, "dur": 30, "args": {"stream": 7}},
{"ph": "X", "cat": "kernel", "name": "nccl", "pid": 0, "tid": 7, "ts": 300, "dur": 120, "args": {"stream": 7}},
{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 8, "ts": 150, "dur": 20, "args": {"stream": 8}},
{"ph": "X", "cat": "kernel", "name": "copy", "pid": 0, "tid": 8, "ts": 1000, "dur": 10, "args": {"stream": 8}}]})";

// The arranged row whose label ends with `suffix`, or -1.
int row_named(const TimelineWidget* t, const QString& suffix) {
  for (size_t i = 0; i < t->rows().size(); ++i)
    if (QString::fromStdString(t->rows()[i].label).endsWith(suffix)) return int(i);
  return -1;
}

}  // namespace

class TestViewerKeys : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString path_;

  // A shown, active window with the trace open.
  bool open(MainWindow& w) {
    w.resize(1400, 900);
    w.show();
    w.activateWindow();
    if (!QTest::qWaitForWindowActive(&w) || !w.openSync({path_}, nullptr).isEmpty()) return false;
    w.timeline()->setFocus();
    QApplication::processEvents();
    return true;
  }

  // The timeline's x of time `ns` (the trace's, not the view's).
  static int x_of(const TimelineWidget* t, int64_t ns) {
    return t->labelWidth() + int(std::lround(t->viewport().x_of(double(ns))));
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    path_ = dir_.filePath("two_streams.json");
    QFile f(path_);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(kTrace);
  }

  void areaDragFillsTheTableAndCtrlCCopiesIt() {
    MainWindow w;
    QVERIFY(open(w));
    TimelineWidget* t = w.timeline();
    const int s7 = row_named(t, "stream 7"), s8 = row_named(t, "stream 8");
    QVERIFY2(s7 >= 0 && s8 >= 0, "the two stream rows");
    const int y7 = t->rowTop(s7) + t->rows()[size_t(s7)].height / 2;
    const int y8 = t->rowTop(s8) + t->rows()[size_t(s8)].height / 2;
    // From 90 µs to 500 µs after the trace's first event (at 0): both streams' slices but copy.
    const int64_t t0 = t->timelineLayout()->start_ns();
    const QPoint a(x_of(t, t0 + 90'000), y7), b(x_of(t, t0 + 500'000), y8);
    QTest::mousePress(t, Qt::LeftButton, Qt::ShiftModifier, a);
    QTest::mouseMove(t, b);
    QTest::mouseRelease(t, Qt::LeftButton, Qt::ShiftModifier, b);
    const auto& range = w.selection()->range();
    QVERIFY(range);
    std::vector<TrackRef> want{{0, uint32_t(t->rows()[size_t(s7)].item)}, {0, uint32_t(t->rows()[size_t(s8)].item)}};
    std::sort(want.begin(), want.end());  // the area holds its tracks sorted
    QVERIFY(range->tracks == want);

    auto* dock = w.findChild<AreaDock*>();
    QVERIFY(dock);
    // nccl: one slice of 120 µs. gemm: 50 + 30 + 20 = 100 µs over 3, mean 33,333.3 ns, max 50 µs.
    const QString all =
        "name\tcount\ttotal_ns\tmean_ns\tmax_ns\n"
        "nccl\t1\t120000\t120000\t120000\n"
        "gemm\t3\t100000\t33333\t50000\n";
    QCOMPARE(dock->model()->rowCount(), 2);
    QCOMPARE(dock->table()->model()->index(0, AreaModel::Name).data().toString(), QString("nccl"));
    QCOMPARE(dock->table()->model()->index(1, AreaModel::Count).data().toString(), QString("3"));
    QApplication::clipboard()->clear();
    dock->table()->setFocus();
    QTest::keyClick(dock->table(), Qt::Key_C, Qt::ControlModifier);
    QCOMPARE(QApplication::clipboard()->text(), all);
    // One row selected: that row alone, under the header.
    dock->table()->selectRow(1);
    QTest::keyClick(dock->table(), Qt::Key_C, Qt::ControlModifier);
    QCOMPARE(QApplication::clipboard()->text(),
             QString("name\tcount\ttotal_ns\tmean_ns\tmax_ns\ngemm\t3\t100000\t33333\t50000\n"));

    // Esc on the timeline clears the area, and the table with it.
    t->setFocus();
    QTest::keyClick(t, Qt::Key_Escape);
    QVERIFY(!w.selection()->range());
    QCOMPARE(dock->model()->rowCount(), 0);
  }

  void mMarksAndUnmarks() {
    MainWindow w;
    QVERIFY(open(w));
    TimelineWidget* t = w.timeline();
    SelectionModel* sel = w.selection();
    const int64_t t0 = t->timelineLayout()->start_ns();
    // The selected event: nccl, [300, 420) µs.
    QVERIFY(w.selectByName("nccl"));
    t->setFocus();
    QTest::keyClick(t, Qt::Key_M);
    QCOMPARE(sel->marks().size(), size_t(1));
    QCOMPARE(sel->marks()[0], (TimeMark{t0 + 300'000, t0 + 420'000}));
    // Drawn across the rows and the ruler: the ruler's grey turns amber at the mark.
    t->zoomToAll();
    const QImage shot = t->grab().toImage();
    const QColor ruler = shot.pixelColor(x_of(t, t0 + 360'000), 3);
    QVERIFY2(ruler.red() > ruler.blue() + 20, qPrintable(ruler.name()));
    QVERIFY(shot.pixelColor(x_of(t, t0 + 600'000), 3).red() == shot.pixelColor(x_of(t, t0 + 600'000), 3).blue());
    QTest::keyClick(t, Qt::Key_M);  // the same event again: unmarked
    QVERIFY(sel->marks().empty());

    // A measured range chosen after the event: M marks the range.
    sel->setRange(TimeRange{0, t0 + 10'000, t0 + 20'000, {}});
    QTest::keyClick(t, Qt::Key_M);
    QCOMPARE(sel->marks().size(), size_t(1));
    QCOMPARE(sel->marks()[0], (TimeMark{t0 + 10'000, t0 + 20'000}));

    // Nothing selected: the event under the cursor (gemm on stream 8, [150, 170) µs).
    sel->setEvent(std::nullopt);
    sel->setRange(std::nullopt);
    const int s8 = row_named(t, "stream 8");
    QVERIFY(s8 >= 0);
    t->setViewport(Viewport::fit(t0 + 140'000, t0 + 180'000, t->viewport().width_px));
    QTest::mouseMove(t, QPoint(x_of(t, t0 + 160'000), t->rowTop(s8) + t->rows()[size_t(s8)].height / 2));
    QTest::keyClick(t, Qt::Key_M);
    QCOMPARE(sel->marks().size(), size_t(2));
    QCOMPARE(sel->marks()[1], (TimeMark{t0 + 150'000, t0 + 170'000}));

    // View > Clear marks: all of them.
    auto* clear = w.findChild<QAction*>("clearMarksAction");
    QVERIFY(clear);
    clear->trigger();
    QVERIFY(sel->marks().empty());
  }

  void slashSearchesQuestionHelpsEscCloses() {
    MainWindow w;
    QVERIFY(open(w));
    TimelineWidget* t = w.timeline();
    auto* edit = w.findChild<QLineEdit*>("searchEdit");
    QVERIFY(edit);
    QVERIFY(!edit->hasFocus());
    QTest::keyClick(t, '/');
    QTRY_VERIFY(edit->hasFocus());
    QTest::keyClicks(edit, "gemm/x");  // the box keeps its own "/"
    QCOMPARE(edit->text(), QString("gemm/x"));
    edit->setText("gemm");
    QTest::keyClick(edit, Qt::Key_Return);
    QCOMPARE(w.searchResult().hits.size(), size_t(3));
    // Esc in the search box closes the search: text, hits and their outlines gone, the timeline focused.
    QTest::keyClick(edit, Qt::Key_Escape);
    QVERIFY(edit->text().isEmpty());
    QVERIFY(w.searchResult().hits.empty());
    QVERIFY(!w.selection()->highlights());
    QTRY_VERIFY(t->hasFocus());

    // ? opens the keyboard map; Esc in it closes it.
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    QTest::keyClick(t, '?');
    auto* browser = w.findChild<QTextBrowser*>("keyboardHelp");
    QVERIFY(browser);
    QTRY_VERIFY(browser->isVisible());
    QTest::keyClick(browser, Qt::Key_Escape);
    QTRY_VERIFY(!browser->isVisible());
    // Open again; Esc on the timeline (no range to clear) closes it too.
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    QTest::keyClick(t, '?');
    QTRY_VERIFY(browser->isVisible());
    QTest::keyClick(t, Qt::Key_Escape);
    QTRY_VERIFY(!browser->isVisible());
  }
};

QTEST_MAIN(TestViewerKeys)
#include "tst_viewer_keys.moc"
