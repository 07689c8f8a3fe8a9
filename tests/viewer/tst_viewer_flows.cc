// Flows in the window: a kernel's launch arrow drawn while its CUDA API group is folded (the default), from
// the group's summary lane, and from the host call's own row once unfolded; a collective's copies on every
// rank linked to the last arrival; and the Ranks overview of a run opened from traces giving each rank the
// "arrived last" count that `shardscope report --format json` gives for the same traces.
#include <QtTest>

#include <QLabel>
#include <QProcess>
#include <QSettings>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include "viewer/app/docks/ranks_overview_dock.h"
#include "viewer/app/main_window.h"
#include "viewer/app/timeline_widget.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {
const QString kSource = SHARDSCOPE_SOURCE_DIR "/";

// The first device event whose launch is on a CUDA API thread.
std::optional<EventSelection> launched_kernel(const TimelineLayout& layout) {
  for (uint32_t r = 0; r < layout.ranks().size(); ++r) {
    const RankView& rv = layout.ranks()[r];
    for (const model::LaunchLink& l : rv.index.launches)
      if (group_of(rv.rank->tracks[l.launch.track]) == RowGroup::CudaApi) return EventSelection{r, l.device};
  }
  return std::nullopt;
}

// How many pixels of the launch arrow's red lie within 2 px of `at`.
int red_near(const QImage& img, QPointF at) {
  int n = 0;
  for (int dy = -2; dy <= 2; ++dy)
    for (int dx = -2; dx <= 2; ++dx) {
      QPoint p = at.toPoint() + QPoint(dx, dy);
      if (!img.rect().contains(p)) continue;
      QColor c = img.pixelColor(p);
      n += c.red() > 150 && c.green() < 90 && c.blue() < 90;
    }
  return n;
}
}  // namespace

class TestViewerFlows : public QObject {
  Q_OBJECT
  QTemporaryDir settings_dir_;  // the folds these tests make are saved here, not where other tests read them

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings_dir_.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings_dir_.path());
  }
  void init() { QSettings("shardscope", "viewer").clear(); }

  void launchArrowLeavesTheFoldedGroup() {
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openSync({kSource + "tests/golden/gpu_demo/gpu_demo.json.gz"}, nullptr).isEmpty());
    TimelineWidget* t = w.timeline();
    const TimelineLayout& layout = *t->timelineLayout();
    std::optional<EventSelection> k = launched_kernel(layout);
    QVERIFY(k);
    const model::LaunchLink* link = layout.ranks()[k->rank].index.launch_of(k->event);
    QVERIFY(link);
    // The default: the CUDA API group folded, so the host call has no row of its own; its group's row shows it.
    QCOMPARE(t->arrangement().row_of_track(k->rank, link->launch.track), -1);
    const int group = t->arrangement().row_showing_track(k->rank, link->launch.track);
    QVERIFY(group >= 0);
    QCOMPARE(t->rows()[size_t(group)].kind, RowKind::Group);
    QCOMPARE(t->rows()[size_t(group)].item, int32_t(RowGroup::CudaApi));

    const model::Rank& rank = *layout.ranks()[k->rank].rank;
    const model::Event &kernel = rank.tracks[k->event.track].events[k->event.index],
                       &call = rank.tracks[link->launch.track].events[link->launch.index];
    t->zoomTo(std::min(call.ts_ns, kernel.ts_ns), kernel.end_ns(), k->rank, k->event.track);
    w.selection()->setEvent(*k);
    std::vector<QLineF> lines = t->flowLines();
    QCOMPARE(lines.size(), size_t(1));
    // From the call's start on the group's summary lane (the group row is above the streams: its bottom edge)
    // to the kernel's start on its stream (its top edge).
    const std::optional<QRectF> to = t->eventRect(k->rank, k->event);
    QVERIFY(to);
    const int top = t->rowTop(group), bottom = top + t->rows()[size_t(group)].height;
    QCOMPARE(lines[0].p1().x(), t->labelWidth() + t->viewport().x_of(double(call.ts_ns)));
    QVERIFY(lines[0].p1().y() > top && lines[0].p1().y() <= bottom);
    QCOMPARE(lines[0].p2(), to->topLeft());
    // And it is drawn: red along the line, which the picture before the selection lacks.
    QImage with = t->grab().toImage();
    QPointF mid = (lines[0].p1() + lines[0].p2()) / 2;
    QVERIFY2(red_near(with, mid) > 0, "no arrow at the line's middle");
    w.selection()->setEvent(std::nullopt);
    QCOMPARE(red_near(t->grab().toImage(), mid), 0);

    // Unfolded (a click on the group's label), the arrow starts at the call's own row.
    QTest::mouseClick(t, Qt::LeftButton, {}, QPoint(20, top + 5));
    QVERIFY(t->arrangement().row_of_track(k->rank, link->launch.track) >= 0);
    w.selection()->setEvent(*k);
    std::optional<QRectF> from = t->eventRect(k->rank, link->launch);
    QVERIFY(from);
    lines = t->flowLines();
    QCOMPARE(lines.size(), size_t(1));
    QCOMPARE(lines[0].p1(), from->bottomLeft());
  }

  void collectiveLinksEveryRankToTheLastArrival() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openSync({kSource + "tests/golden/trainer_cpu_2ranks/pre"}, nullptr).isEmpty());
    // Each rank folded to its header: both copies in view, on their ranks' summary lanes.
    TimelineWidget* t = w.timeline();
    for (int i = int(t->rows().size()) - 1; i >= 0; --i)
      if (t->rows()[size_t(i)].kind == RowKind::RankHeader)
        QTest::mouseClick(t, Qt::LeftButton, {}, QPoint(20, t->rowTop(i) + 5));
    QCOMPARE(t->rows().size(), size_t(2));
    const analysis::AnalysedRun& run = *w.selection()->run();
    // An instance the analysis matched, and its copy on the rank that was not last.
    QVERIFY(!run.report.stragglers.instances.empty());
    const metrics::StragglerInstance& s = run.report.stragglers.instances.front();
    const AcrossRanks* across = w.selection()->across();
    QVERIFY(across);
    const metrics::InstanceId id{s.kind, s.group, s.by_seq, int64_t(s.ordinal)};
    const uint32_t early = run.trace.ranks[0].rank == s.last_rank ? 1 : 0, last = 1 - early;
    std::optional<model::EventRef> a = across->find(early, id), b = across->find(last, id);
    QVERIFY(a && b);
    const model::Event& e = run.trace.ranks[early].tracks[a->track].events[a->index];
    t->zoomTo(e.ts_ns, e.end_ns(), early, a->track);
    w.selection()->setEvent(EventSelection{early, *a});
    // After its launch arrow (if the trainer recorded one), one link: the early rank's copy to the last one's.
    const size_t launches = launch_flows(t->timelineLayout()->ranks()[early].index, early, *a).size();
    std::vector<QLineF> lines = t->flowLines();
    QCOMPARE(lines.size(), launches + 1);
    std::optional<QRectF> ra = t->flowRect(early, *a), rb = t->flowRect(last, *b);
    QVERIFY(ra && rb);
    QCOMPARE(lines.back().p1().x(), ra->left());
    QCOMPARE(lines.back().p2().x(), rb->left());
    // The last one outlined red: red pixels on its outline's left edge, none there once deselected.
    const QPointF edge(rb->left(), rb->center().y());
    QVERIFY2(t->rect().contains(edge.toPoint()), "the last rank's copy is out of view");
    QVERIFY(red_near(t->grab().toImage(), edge) > 0);
    w.selection()->setEvent(std::nullopt);
    QCOMPARE(red_near(t->grab().toImage(), edge), 0);
  }

  void arrivedLastOnTracesAgreesWithTheReport() {
    const QString traces = kSource + "tests/data/h100_nccl2/pytorch_fsdp2";
    QProcess cli;
    cli.start(SHARDSCOPE_BIN, {"report", "--format", "json", traces});
    QVERIFY(cli.waitForFinished(120000));
    QCOMPARE(cli.exitCode(), 0);
    const nlohmann::json report = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
    std::map<int, size_t> expected;
    for (const nlohmann::json& r : report.at("stragglers").at("ranks"))
      expected[r.at("rank").get<int>()] = r.at("times_last").get<size_t>();
    // The CLI's own per-rank numbers sum to its matched instances: each instance has one last rank.
    size_t sum = 0;
    for (auto [rank, n] : expected) sum += n;
    QCOMPARE(sum, report.at("stragglers").at("instances").size());
    QCOMPARE(expected.size(), size_t(2));

    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.openSync({traces}, nullptr).isEmpty());
    RanksOverviewDock* dock = w.ranksOverviewDock();
    QVERIFY(dock->overview());
    RanksOverviewTable* m = dock->model();
    QCOMPARE(m->rowCount(), 2);
    std::map<int, size_t> shown;
    for (int i = 0; i < m->rowCount(); ++i)
      shown[m->data(m->index(i, RanksOverviewTable::Rank), Qt::DisplayRole).toInt()] =
          m->data(m->index(i, RanksOverviewTable::TimesLast), Qt::DisplayRole).toULongLong();
    QCOMPARE(shown, expected);
    QVERIFY(dock->note()->text().contains("from their traces"));

    // Double-clicking the rank last most often selects its latest arrival, with the flows to it.
    const int worst = expected[0] >= expected[1] ? 0 : 1;
    int row = m->data(m->index(0, RanksOverviewTable::Rank), Qt::DisplayRole).toInt() == worst ? 0 : 1;
    dock->expand(row);
    QVERIFY(w.selection()->event());
    const EventSelection e = *w.selection()->event();
    QVERIFY(w.selection()->across()->arrived_last(e.rank, e.event));
    // Its launch arrow, then the other rank's copy linked to it.
    const size_t launches = launch_flows(w.timeline()->timelineLayout()->ranks()[e.rank].index, e.rank, e.event).size();
    QCOMPARE(w.timeline()->flowLines().size(), launches + 1);
  }
};

QTEST_MAIN(TestViewerFlows)
#include "tst_viewer_flows.moc"
