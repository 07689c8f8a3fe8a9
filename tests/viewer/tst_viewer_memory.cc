// The viewer's memory budget: at most 150 bytes an event once a run is open (the model's events, string
// tables, args, counters and steps, and the timeline's side tables), for the project's own format and for
// Kineto JSON, on a generated run of 200 k events written into a temporary folder. Counted from the
// containers (viewer/model/run_memory.h), not RSS, so the number is the same on every machine.
#include <QtTest>

#include <QTemporaryDir>

#include "analyzer/analysis/run.h"
#include "viewer/bench/generated_files.h"
#include "viewer/model/run_memory.h"
#include "viewer/model/timeline_layout.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {

constexpr size_t kEvents = 200'000;
constexpr double kBudget = 150.0;  // bytes an event (docs/viewer.md)

RunMemory open_generated(const QTemporaryDir& dir, bool kineto) {
  const std::string path = dir.filePath(kineto ? "kineto" : "shardscope").toStdString();
  bench::write_generated_run(path, kEvents, 4, kineto);
  plugins::LoadOptions options;  // as the viewer's loader asks
  options.keep_going = true;
  options.keep_args = true;
  analysis::AnalysedRun run = analysis::analyse_run({path}, options);
  TimelineLayout layout(run.trace);
  RunMemory m = run_memory(run, layout);
  qInfo("%s: %zu events, %.1f B/event: events %.1f, strings %.1f, args %.1f, other %.1f, side tables %.1f",
        kineto ? "kineto" : "shardscope", m.events, m.per_event(), double(m.event_bytes) / double(m.events),
        double(m.string_bytes) / double(m.events), double(m.args_bytes) / double(m.events),
        double(m.other_bytes) / double(m.events), double(m.side_bytes) / double(m.events));
  return m;
}

}  // namespace

class TestViewerMemory : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void ownFormatStaysUnderBudget() {
    RunMemory m = open_generated(dir_, false);
    QVERIFY(m.events >= kEvents);
    QVERIFY(m.args_bytes > 0);  // the args were kept, as the window keeps them
    QVERIFY2(m.per_event() <= kBudget, qPrintable(QString("%1 B/event").arg(m.per_event())));
  }

  void kinetoStaysUnderBudget() {
    RunMemory m = open_generated(dir_, true);
    QVERIFY(m.events >= kEvents);
    QVERIFY(m.args_bytes > 0);
    QVERIFY2(m.per_event() <= kBudget, qPrintable(QString("%1 B/event").arg(m.per_event())));
  }

 private:
  QTemporaryDir dir_;
};

QTEST_MAIN(TestViewerMemory)
#include "tst_viewer_memory.moc"
