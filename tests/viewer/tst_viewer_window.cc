// The window itself, offscreen: a malformed file among good ones (the warning names the file and the
// reason, the good ranks load), search by name stepping through hits, the comparison dock showing the same
// diff `shardscope diff` prints, and the memory dock's chart from the report.
#include <QtTest>

#include <QFile>
#include <QLineEdit>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cmath>

#include "analyzer/analysis/diff.h"
#include "analyzer/report/diff_render.h"
#include "analyzer/report/memory_render.h"
#include "viewer/app/docks/comparison_dock.h"
#include "viewer/app/main_window.h"
#include "viewer/app/memory_chart_widget.h"
#include "viewer/app/overview_widget.h"
#include "viewer/app/timeline_widget.h"
#include "tests/viewer/viewer_test_support.h"
#include "viewer/model/palette.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {

const QString kGolden = SHARDSCOPE_SOURCE_DIR "/tests/golden/";

struct Warning {
  QString title, text;
};

}  // namespace

class TestViewerWindow : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }  // recent files go to a test location

  void malformedFileAmongGoodOnes() {
    QTemporaryDir dir;
    QString bad = test::write_malformed_trace(dir, "broken_rank.json");
    QVERIFY(!bad.isEmpty());
    MainWindow w;
    std::vector<Warning> warnings;
    w.setWarningSink([&](const QString& title, const QString& text) { warnings.push_back({title, text}); });
    w.resize(1200, 800);
    w.show();
    w.openAsync({kGolden + "kineto_two_ranks/sampled_rank-0.json.gz", bad,
                 kGolden + "kineto_two_ranks/sampled_rank-1.json.gz"});
    QVERIFY(w.loading());
    QTRY_VERIFY_WITH_TIMEOUT(!w.loading() && w.run() != nullptr, 60'000);
    // The good files are open and the window is usable.
    QCOMPARE(w.run()->trace.ranks.size(), size_t(2));
    QCOMPARE(w.run()->failures.size(), size_t(1));
    QVERIFY(w.overview()->isVisible());
    // One warning, naming the file and saying why: the loader's own message.
    QCOMPARE(warnings.size(), size_t(1));
    const plugins::FileFailure& failure = w.run()->failures[0];
    QVERIFY(QString::fromStdString(failure.path).endsWith("broken_rank.json"));
    QVERIFY(!failure.message.empty());
    QVERIFY2(warnings[0].text.contains("broken_rank.json"), qPrintable(warnings[0].text));
    QVERIFY2(warnings[0].text.contains(QString::fromStdString(failure.message)), qPrintable(warnings[0].text));
    // The window still works: a search finds events on the loaded ranks.
    w.search("nccl");
    QVERIFY(!w.searchResult().hits.empty());
  }

  void nothingLoadsWarnsAndKeepsTheOpenRun() {
    MainWindow w;
    std::vector<Warning> warnings;
    w.setWarningSink([&](const QString& title, const QString& text) { warnings.push_back({title, text}); });
    QVERIFY(w.openSync({kGolden + "gpu_demo/gpu_demo.json.gz"}, nullptr).isEmpty());
    const analysis::AnalysedRun* before = w.run();
    w.openAsync({kGolden + "no_such_run"});
    QTRY_VERIFY_WITH_TIMEOUT(!w.loading(), 60'000);
    QCOMPARE(warnings.size(), size_t(1));
    QVERIFY2(warnings[0].text.contains("no_such_run"), qPrintable(warnings[0].text));
    QCOMPARE(w.run(), before);
  }

  void ranksFromDifferentRunsGetTheReportsMessage() {
    // Rank 0 of two runs: the loader refuses them as one run; the window says what `report` says.
    QStringList paths{kGolden + "trainer_cpu_2ranks/none/trace.rank0.json.gz",
                      kGolden + "trainer_cpu_2ranks/pre/trace.rank0.json.gz"};
    std::string expected;
    try {
      plugins::LoadOptions options;
      options.keep_going = true;
      analysis::analyse_run({paths[0].toStdString(), paths[1].toStdString()}, options);
    } catch (const plugins::MixedRunsError& e) {
      expected = e.what();
    }
    QVERIFY(!expected.empty());
    MainWindow w;
    std::vector<Warning> warnings;
    w.setWarningSink([&](const QString& title, const QString& text) { warnings.push_back({title, text}); });
    w.openAsync(paths);
    QTRY_VERIFY_WITH_TIMEOUT(!w.loading(), 60'000);
    QCOMPARE(warnings.size(), size_t(1));
    QCOMPARE(warnings[0].text, QString::fromStdString(expected));
    QVERIFY(!w.run());
  }

  void searchStepsThroughHits() {
    MainWindow w;
    w.resize(1200, 800);
    QVERIFY(w.openSync({kGolden + "kineto_two_ranks"}, nullptr).isEmpty());
    auto* edit = w.findChild<QLineEdit*>("searchEdit");
    QVERIFY(edit);
    edit->setText("ALL_GATHER");  // case ignored: nccl:_all_gather_base
    QTest::keyClick(edit, Qt::Key_Return);
    const SearchResult& r = w.searchResult();
    QVERIFY(r.hits.size() >= 2);
    QVERIFY(w.currentHit());
    size_t first = *w.currentHit();
    // The selection is the hit, and its name matches.
    auto check_selected = [&](size_t i) {
      const SearchHit& h = r.hits[i];
      const auto& sel = w.selection()->event();
      QVERIFY(sel);
      QCOMPARE(sel->rank, h.rank);
      QVERIFY(sel->event == h.event);
      // The view holds the hit.
      const model::Event& e = w.run()->trace.ranks[h.rank].tracks[h.event.track].events[h.event.index];
      QVERIFY(double(e.ts_ns) >= w.timeline()->viewport().start_ns);
      QVERIFY(double(e.end_ns()) <= w.timeline()->viewport().end_ns());
      QVERIFY(QString::fromUtf8(w.run()->trace.ranks[h.rank].str(e.name)).contains("all_gather", Qt::CaseInsensitive));
    };
    check_selected(first);
    // Enter again on the same text: the next hit; Shift+Enter: back.
    QTest::keyClick(edit, Qt::Key_Return);
    QCOMPARE(*w.currentHit(), (first + 1) % r.hits.size());
    check_selected(*w.currentHit());
    QTest::keyClick(edit, Qt::Key_Return, Qt::ShiftModifier);
    QCOMPARE(*w.currentHit(), first);
    w.search("no event has this name");
    QVERIFY(w.searchResult().hits.empty());
    QVERIFY(!w.currentHit());
  }

  void overviewClickMovesTheView() {
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(w.openSync({kGolden + "gpu_demo/gpu_demo.json.gz"}, nullptr).isEmpty());
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    TimelineWidget* t = w.timeline();
    t->zoomBy(0.05, 0);  // a twentieth of the run, at its start
    double span = t->viewport().end_ns() - t->viewport().start_ns;
    OverviewWidget* o = w.overview();
    QVERIFY(o->height() > 0);
    // The strip spans the timeline's plot: right of the labels, left of the rows' scrollbar.
    int x = t->labelWidth() + t->viewport().width_px * 3 / 4;
    QTest::mouseClick(o, Qt::LeftButton, {}, QPoint(x, o->height() / 2));
    // Centred three quarters into the run, zoom kept.
    const Overview& ov = o->overview();
    double expect_centre = ov.start_ns + 0.75 * double(ov.end_ns - ov.start_ns);
    double centre = (t->viewport().start_ns + t->viewport().end_ns()) / 2;
    QVERIFY2(std::abs(centre - expect_centre) < double(ov.end_ns - ov.start_ns) / 100,
             qPrintable(QString::number(centre - expect_centre)));
    QVERIFY(std::abs((t->viewport().end_ns() - t->viewport().start_ns) - span) < 1e-6 * span);
  }

  void comparisonShowsTheDiff() {
    MainWindow w;
    QString a = kGolden + "trainer_cpu_2ranks/none", b = kGolden + "trainer_cpu_2ranks/pre";
    QVERIFY(!w.openComparisonSync({b}).isEmpty());  // nothing open yet: refused with a reason
    QVERIFY(w.openSync({a}, nullptr).isEmpty());
    QVERIFY(w.openComparisonSync({b}).isEmpty());
    // The dock's table holds the numbers `shardscope diff A B` has for the same runs, row for row.
    plugins::LoadOptions options;
    analysis::AnalysedRun ra = analysis::analyse_run({a.toStdString()}, options),
                          rb = analysis::analyse_run({b.toStdString()}, options);
    analysis::RunDiff d = analysis::diff_runs(ra, rb);
    const ComparisonModel* m = w.comparisonDock()->model();
    int row = 0;
    for (const analysis::RankDiff& rd : d.ranks) {
      for (const analysis::DiffRow& r : rd.rows) {
        QCOMPARE(m->item(row).metric, QString::fromStdString(r.metric));
        QCOMPARE(m->item(row).a, r.a);
        QCOMPARE(m->item(row).b, r.b);
        ++row;
      }
      row += int(rd.largest_changes.size());
    }
    QCOMPARE(m->rowCount(), row);
    // Run B's timeline beside A's: its own ranks and span.
    const TimelineLayout* lb = w.comparisonTimeline()->timelineLayout();
    QVERIFY(lb);
    QCOMPARE(lb->ranks().size(), rb.trace.ranks.size());
    QCOMPARE(lb->ranks()[0].rank->tracks.size(), rb.trace.ranks[0].tracks.size());
    QCOMPARE(lb->events(), TimelineLayout(rb.trace).events());
    QVERIFY(w.timeline()->timelineLayout()->start_ns() != lb->start_ns() ||
            w.timeline()->timelineLayout()->end_ns() != lb->end_ns());
  }

  void memoryDockChartsTheReport() {
    MainWindow w;
    w.resize(1200, 800);
    QVERIFY(w.openSync({kGolden + "trainer_cpu_2ranks/pre"}, nullptr).isEmpty());
    const MemoryChart& c = w.memoryChart()->chart();
    QCOMPARE(c.ranks.size(), w.run()->report.ranks.size());
    QVERIFY(!c.ranks[0].bars.empty());
    QVERIFY(c.scale_bytes > 0);
    // The dock's chart painted apart (the dock is a tab behind the prefetch table): the measured bars in
    // blue and the predicted in orange, as many of each as the chart has values.
    MemoryChartWidget alone;
    alone.setChart(c);
    alone.resize(alone.sizeHint());
    QImage img(alone.size(), QImage::Format_RGB32);
    img.fill(Qt::white);
    alone.render(&img);
    int blue = 0, orange = 0;
    for (int y = 0; y < img.height(); ++y)
      for (int x = 0; x < img.width(); ++x) {
        blue += (img.pixel(x, y) & 0xFFFFFF) == kAllGather;
        orange += (img.pixel(x, y) & 0xFFFFFF) == kCompute;
      }
    size_t measured = 0, predicted = 0;
    for (const MemoryRankChart& r : c.ranks)
      for (const MemoryBar& b : r.bars) measured += b.measured.has_value(), predicted += b.predicted.has_value();
    // Each bar is 7 px high and at least a pixel long; the legend adds one swatch of each.
    QVERIFY2(blue >= int(7 * measured), qPrintable(QString::number(blue)));
    QVERIFY2(orange >= int(7 * predicted), qPrintable(QString::number(orange)));
    QVERIFY(blue > 1000);
  }

  void memoryDockShowsWholeValuesAndTheAssumptions() {
    // 1,234,567,890,000 B measured against 1.9e12 predicted: "1234567.890 / 1900000.000 (-35.0 %)", which
    // the fixed 170 px value column cut at "(-35". The widget is at least wide enough for the whole of it.
    MemoryChart c;
    c.scale_bytes = 1.9e12;
    MemoryRankChart r;
    r.bars.push_back({"optimizer_state", 1234567890000.0, 1.9e12, (1234567890000.0 - 1.9e12) / 1.9e12});
    c.ranks.push_back(r);
    MemoryChartWidget alone;
    alone.setChart(c);
    const QString text = QStringLiteral("1234567.890 / 1900000.000 (-35.0 %)");
    QCOMPARE(MemoryChartWidget::valueText(c.ranks[0].bars[0]), text);
    const int need = QFontMetrics(alone.font()).horizontalAdvance(text);
    QVERIFY2(alone.valueColumnWidth() >= need, qPrintable(QString("%1 < %2").arg(alone.valueColumnWidth()).arg(need)));
    QVERIFY(alone.minimumWidth() >= 140 + need);
    // The golden run's rank 0: hovering its header gives how the model predicted, as the report words it.
    MainWindow w;
    QVERIFY(w.openSync({kGolden + "trainer_cpu_2ranks/pre"}, nullptr).isEmpty());
    const MemoryRankChart& r0 = w.memoryChart()->chart().ranks[0];
    QVERIFY(r0.memory);
    const std::string how = report::states_model(*r0.memory);
    QVERIFY(!how.empty());
    const QString tip = w.memoryChart()->toolTipAt(QPoint(20, 2 + 20 + 5));  // below the legend: rank 0's header
    QVERIFY2(tip.contains(QString::fromStdString(how)), qPrintable(tip));
    QVERIFY(w.memoryChart()->toolTipAt(QPoint(20, 5)).isEmpty());  // the legend
  }
};

QTEST_MAIN(TestViewerWindow)
#include "tst_viewer_window.moc"
