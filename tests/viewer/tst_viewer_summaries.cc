// A run opened from its rank summaries in the window: the Ranks overview lists every rank with no event
// loaded (no run, no layout), the straggler first; double-clicking a rank loads its trace alone into the
// timeline and keeps the overview; a rank whose trace is gone says where it looked. The summaries are made
// here from the golden trainer run with `shardscope summarize`.
#include <QtTest>

#include <QLabel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>

#include <cstdlib>
#include <filesystem>

#include "viewer/app/docks/ranks_overview_dock.h"
#include "viewer/app/main_window.h"
#include "viewer/app/timeline_widget.h"

using namespace shardscope;
using namespace shardscope::viewer;
namespace fs = std::filesystem;

namespace {

const fs::path kRun = fs::path(SHARDSCOPE_SOURCE_DIR) / "tests/golden/trainer_cpu_2ranks/pre";

bool summarize(const fs::path& run, const fs::path& out) {
  const std::string cmd = "'" SHARDSCOPE_BIN "' summarize '" + run.string() + "' -o '" + out.string() + "' >/dev/null";
  return std::system(cmd.c_str()) == 0;
}

// Double-clicks the table's row as a user does.
void double_click_row(QTableView* view, int row) {
  const QRect cell = view->visualRect(view->model()->index(row, 0));
  QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, cell.center());
  QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, cell.center());
}

}  // namespace

class TestViewerSummaries : public QObject {
  Q_OBJECT
 private slots:
  void init() { QStandardPaths::setTestModeEnabled(true); }

  void opensSummariesWithoutEventsThenARankOnDoubleClick() {
    QTemporaryDir dir;
    QVERIFY(summarize(kRun, dir.path().toStdString()));
    MainWindow w;
    QStringList warnings;
    w.setWarningSink([&](const QString& t, const QString& text) { warnings << t + ": " + text; });
    w.resize(1400, 900);
    w.show();
    QCOMPARE(w.openSync({dir.path()}, nullptr), QString());
    // Nothing loaded but the summaries.
    QVERIFY(w.run() == nullptr);
    QVERIFY(w.timeline()->timelineLayout() == nullptr);
    RanksOverviewDock* dock = w.ranksOverviewDock();
    QVERIFY(dock->overview());
    QCOMPARE(dock->overview()->events_loaded, size_t(0));
    QCOMPARE(dock->table()->model()->rowCount(), 2);
    QVERIFY(dock->note()->text().contains("2 ranks from their summaries"));
    QVERIFY(dock->note()->text().contains("Straggler: rank"));
    QVERIFY(w.windowTitle().contains("2 ranks from summaries"));
    // The straggler first: the row with the most last arrivals.
    const QAbstractItemModel* m = dock->table()->model();
    QVERIFY(m->data(m->index(0, RanksOverviewTable::TimesLast)).toULongLong() >
            m->data(m->index(1, RanksOverviewTable::TimesLast)).toULongLong());
    QVERIFY(!m->data(m->index(0, RanksOverviewTable::StepTime)).toString().contains("n/a"));
    // Sorted by rank on a header click, then back.
    dock->table()->sortByColumn(RanksOverviewTable::Rank, Qt::AscendingOrder);
    QCOMPARE(m->data(m->index(0, RanksOverviewTable::Rank)).toInt(), 0);
    QCOMPARE(m->data(m->index(1, RanksOverviewTable::Rank)).toInt(), 1);

    // Expanding rank 1 loads its trace alone.
    double_click_row(dock->table(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(w.run() != nullptr && !w.loading(), 10000);
    QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join('\n')));
    QCOMPARE(w.run()->trace.ranks.size(), size_t(1));
    QCOMPARE(w.run()->trace.ranks[0].rank, 1);
    QVERIFY(w.run()->trace.ranks[0].event_count() > 0);
    QVERIFY(w.timeline()->timelineLayout() != nullptr);
    QVERIFY(fs::equivalent(w.run()->trace.ranks[0].source, kRun / "trace.rank1.json.gz"));
    // The overview stays, for the next rank.
    QCOMPARE(dock->table()->model()->rowCount(), 2);
  }

  void summariesBesideTracesOpenAsSummaries() {
    QTemporaryDir dir;
    const fs::path d = dir.path().toStdString();
    for (const char* f : {"trace.rank0.json.gz", "trace.rank1.json.gz"}) fs::copy_file(kRun / f, d / f);
    QVERIFY(summarize(d, d));
    MainWindow w;
    QCOMPARE(w.openSync({dir.path()}, nullptr), QString());
    QVERIFY(w.run() == nullptr);
    QCOMPARE(w.ranksOverviewDock()->table()->model()->rowCount(), 2);
    // Its trace, beside the summary, is found when the recorded one is gone.
    fs::rename(d / "trace.rank0.json.gz", d / "moved.json.gz");
    QStringList warnings;
    w.setWarningSink([&](const QString& t, const QString& text) { warnings << t + ": " + text; });
    w.ranksOverviewDock()->table()->sortByColumn(RanksOverviewTable::Rank, Qt::AscendingOrder);
    w.ranksOverviewDock()->expand(0);
    QCOMPARE(warnings.size(), 1);
    QVERIFY2(warnings[0].contains("rank 0's trace was not found"), qPrintable(warnings[0]));
    QVERIFY(!w.loading());
    QVERIFY(w.run() == nullptr);
  }

  // ... and replaces the summaries' overview with its own, made from its traces (tst_viewer_flows.cc checks
  // its numbers against the CLI).
  void aTraceRunStillOpensAsEverAndReplacesTheOverview() {
    QTemporaryDir dir;
    QVERIFY(summarize(kRun, dir.path().toStdString()));
    MainWindow w;
    QCOMPARE(w.openSync({dir.path()}, nullptr), QString());
    QCOMPARE(w.ranksOverviewDock()->table()->model()->rowCount(), 2);
    QCOMPARE(w.openSync({QString::fromStdString(kRun.string())}, nullptr), QString());
    QVERIFY(w.run() != nullptr);
    QCOMPARE(w.run()->trace.ranks.size(), size_t(2));
    QCOMPARE(w.ranksOverviewDock()->table()->model()->rowCount(), 2);
    QVERIFY(w.ranksOverviewDock()->overview()->events_loaded > 0);
    for (const RankOverviewRow& r : w.ranksOverviewDock()->overview()->rows) QVERIFY(r.summary.empty());
  }
};

QTEST_MAIN(TestViewerSummaries)
#include "tst_viewer_summaries.moc"
