// Loading a big run in the window: the progress area names the file being read with its MB and events while
// it is read, Cancel stops the worker and leaves the window as it was (the previous run, or empty), and the
// next open works. The run is generated into a temporary folder; the worker is held at its first in-file
// report (Loader::setWorkerHook) until the test has clicked Cancel, so no step depends on the machine's speed.
#include <QtTest>

#include <QLabel>
#include <QPushButton>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <atomic>
#include <chrono>
#include <thread>

#include "tracer/format/keys.h"
#include "tracer/format/writer.h"
#include "viewer/app/load_progress_bar.h"
#include "viewer/app/main_window.h"
#include "viewer/model/load_status.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {

const QString kGolden = SHARDSCOPE_SOURCE_DIR "/tests/golden/";
constexpr int kEvents = 120'000;  // about 14 MB of JSON: three in-file reports at 4 MB each

// One rank of nested host ranges, written as the tracer writes its files.
QString write_big_rank(const QTemporaryDir& dir) {
  const QString path = dir.filePath("big.rank0.json");
  nlohmann::json header = {{keys::kSchemaVersion, keys::kSchemaVersionValue}, {keys::kRank, 0}, {keys::kWorldSize, 1}};
  trace::Writer w(path.toStdString(), header);
  for (int i = 0; i < kEvents; ++i) {
    trace::Event e;
    e.name = i % 2 ? "aten::mm" : "aten::linear";
    e.cat = "cpu_op";
    e.tid = 1 + i % 4;
    e.ts_ns = int64_t(i) * 10'000;
    e.dur_ns = 8'000;
    e.args = {{"Input Dims", "[[4096, 4096], [4096, 4096]]"}};
    w.append(e);
  }
  w.close();
  return path;
}

// Holds the worker at its first report from inside the file until `released` (at most 30 s).
void hold_until(MainWindow& w, std::atomic<bool>& released) {
  w.loader()->setWorkerHook([&released](const plugins::LoadProgress& p) {
    if (p.reading.empty() || p.reading_events == 0) return;
    for (int i = 0; i < 3000 && !released; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
}

}  // namespace

class TestViewerLoading : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(dir_.isValid());
    big_ = write_big_rank(dir_);
  }

  void statusLineNamesTheFileItsMegabytesAndEvents() {
    plugins::LoadProgress p;
    p.files = 8;
    p.reading = "/runs/a/rank3.json.gz";
    p.reading_bytes_done = 412'000'000;
    p.reading_bytes = 980'000'000;
    p.reading_events = 2'100'000;
    QCOMPARE(QString::fromStdString(load_status_text(p)),
             QString("reading rank3.json.gz — 412 / 980 MB, 2.1 M events"));
    p.reading.clear();
    p.files_done = 8;
    QCOMPARE(QString::fromStdString(load_status_text(p)), QString("analysing 8 files"));
    p.bytes = 2000, p.bytes_done = 500;
    QCOMPARE(load_permille(p), 250);
  }

  void cancelKeepsThePreviousRunAndTheNextOpenWorks() {
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(w.openSync({kGolden + "kineto_two_ranks"}, nullptr).isEmpty());
    const analysis::AnalysedRun* before = w.run();
    const QString title = w.windowTitle();
    std::atomic<bool> released{false};
    hold_until(w, released);

    w.openAsync({big_});
    QLabel* status = w.loadProgress()->label();
    QTRY_VERIFY_WITH_TIMEOUT(w.loadProgress()->isVisible(), 10000);
    // The label names the file while it is read, with its MB and its events so far.
    QTRY_VERIFY_WITH_TIMEOUT(status->text().startsWith("reading big.rank0.json — ") &&
                                 status->text().contains(" MB, ") && !status->text().endsWith(" 0 events"),
                             20000);
    QTest::mouseClick(w.loadProgress()->cancelButton(), Qt::LeftButton);
    released = true;
    QTRY_VERIFY_WITH_TIMEOUT(!w.loading(), 20000);
    QCOMPARE(w.run(), before);
    QCOMPARE(w.windowTitle(), title);
    QVERIFY(!w.loadProgress()->isVisible());

    // The next open reads the whole file.
    w.loader()->setWorkerHook({});
    w.openAsync({big_});
    QTRY_VERIFY_WITH_TIMEOUT(!w.loading(), 60000);
    QVERIFY(w.run() && w.run() != before);
    QCOMPARE(w.run()->trace.ranks.size(), size_t(1));
    QCOMPARE(w.run()->trace.ranks[0].event_count(), size_t(kEvents));
  }

  void cancelOnAnEmptyWindowLeavesItEmpty() {
    MainWindow w;
    w.show();
    std::atomic<bool> released{false};
    hold_until(w, released);
    w.openAsync({big_});
    QTRY_VERIFY_WITH_TIMEOUT(w.loadProgress()->label()->text().startsWith("reading big.rank0.json"), 20000);
    QTest::mouseClick(w.loadProgress()->cancelButton(), Qt::LeftButton);
    released = true;
    QTRY_VERIFY_WITH_TIMEOUT(!w.loading(), 20000);
    QVERIFY(w.run() == nullptr);
  }

  void closingTheWindowMidLoadStopsTheWorker() {
    std::atomic<bool> released{false};
    {
      MainWindow w;
      hold_until(w, released);
      w.openAsync({big_});
      QTRY_VERIFY_WITH_TIMEOUT(w.loadProgress()->label()->text().startsWith("reading big.rank0.json"), 20000);
      released = true;
    }  // ~Loader cancels and joins: returns without parsing the rest, and no thread is left behind
  }

 private:
  QTemporaryDir dir_;
  QString big_;
};

QTEST_MAIN(TestViewerLoading)
#include "tst_viewer_loading.moc"
