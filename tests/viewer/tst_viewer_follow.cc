// `shardscope-viewer --follow` in the window (viewer/app/live_follow.h): the golden two-rank trainer run
// written into a folder a few hundred bytes at a time. As steps land the window opens the run again with
// them, the view goes to the newest step, and once the user has moved the view back it stays there. The
// test drives the polls itself (no timer) and waits on the loader, so nothing depends on the machine's speed.
#include <QtTest>

#include <QStandardPaths>
#include <QTemporaryDir>

#include <zlib.h>

#include <fstream>

#include "tests/support/gunzip.h"
#include "viewer/app/live_follow.h"
#include "viewer/app/main_window.h"
#include "viewer/app/timeline_widget.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {

using shardscope::test::gunzip_file;

const model::Step* step_of(const MainWindow& w, int64_t number) {
  for (const model::Step& s : w.run()->trace.ranks.at(0).steps)
    if (s.number == number) return &s;
  return nullptr;
}

}  // namespace

class TestViewerFollow : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }  // the recent-runs list stays the test's
  void stepsLandAndTheViewFollowsTheNewest() {
    QTemporaryDir dir;
    const std::string golden = SHARDSCOPE_SOURCE_DIR "/tests/golden/trainer_cpu_2ranks/pre/";
    std::vector<std::string> text;
    for (int r = 0; r < 2; ++r) text.push_back(gunzip_file(golden + "trace.rank" + std::to_string(r) + ".json.gz"));
    std::vector<size_t> written(2, 0);
    MainWindow w;
    QStringList warnings;
    w.setWarningSink([&](const QString& t, const QString& m) { warnings << t + ": " + m; });
    w.resize(1200, 800);
    LiveFollow follow(&w, dir.path(), 1 << 30);  // polled by the test, not the timer
    size_t opened = 0;
    for (size_t chunk = 0; !follow.steps().done(); ++chunk) {
      QVERIFY(chunk < 10000);
      for (int r = 0; r < 2; ++r) {
        const size_t n = std::min<size_t>(613, text[r].size() - written[r]);
        std::ofstream(dir.filePath(QString("trace.rank%1.json").arg(r)).toStdString(), std::ios::binary | std::ios::app)
            .write(text[r].data() + written[r], std::streamsize(n));
        written[r] += n;
      }
      const size_t before = follow.steps().steps().size();
      follow.poll();
      if (follow.steps().steps().size() == before) continue;
      QTRY_VERIFY_WITH_TIMEOUT(w.run() != nullptr && !w.loading(), 60000);
      ++opened;
      // The reopened run holds the newest step, and the view shows it.
      const model::Step* newest = step_of(w, *follow.steps().newest());
      QVERIFY(newest);
      QVERIFY(w.timeline()->viewport().start_ns <= double(newest->start_ns));
      QVERIFY(w.timeline()->viewport().end_ns() >= double(newest->end_ns));
    }
    QCOMPARE(opened, size_t(2));  // step 0 while the files grew; steps 1 and 2 once they were complete
    QCOMPARE(w.run()->trace.ranks.at(0).steps.size(), size_t(3));
    // The user goes back to step 0: following stops.
    const model::Step* first = step_of(w, 0);
    w.timeline()->zoomTo(first->start_ns, first->end_ns, 0, 0);
    QVERIFY(!follow.steps().following());
    QVERIFY(warnings.isEmpty());
  }
};

QTEST_MAIN(TestViewerFollow)
#include "tst_viewer_follow.moc"
