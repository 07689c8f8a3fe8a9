// The window read by someone who keeps it open: hover tooltips on slices and counters, the cursor's time in
// the status bar, the colour legend, the Help menu's keyboard map with each timeline key pressed, and the
// Event dock keeping its width for a 500-character kernel name. Everything is driven through the real
// window (mouse moves, key presses, help events), offscreen.
#include <QtTest>

#include <QDockWidget>
#include <QHelpEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QToolTip>

#include <map>
#include <set>

#include "tests/viewer/viewer_test_support.h"
#include "viewer/app/docks/event_dock.h"
#include "viewer/app/docks/legend_dock.h"
#include "viewer/app/main_window.h"
#include "viewer/app/timeline_widget.h"
#include "viewer/model/counter_track.h"
#include "viewer/model/keymap.h"
#include "viewer/model/palette.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {

const QString kGolden = SHARDSCOPE_SOURCE_DIR "/tests/golden/";

// The first event of the run that satisfies `pred`, as the timeline's selection.
template <class Pred>
std::optional<EventSelection> find_event(const TimelineLayout& layout, Pred pred) {
  for (uint32_t r = 0; r < layout.ranks().size(); ++r) {
    const model::Rank& rank = *layout.ranks()[r].rank;
    for (uint32_t t = 0; t < rank.tracks.size(); ++t)
      for (uint32_t i = 0; i < rank.tracks[t].events.size(); ++i)
        if (pred(rank, rank.tracks[t].events[i])) return EventSelection{r, {t, i}};
  }
  return std::nullopt;
}

QString tooltip_at(TimelineWidget* t, QPoint pos) {
  QToolTip::hideText();
  QHelpEvent help(QEvent::ToolTip, pos, t->mapToGlobal(pos));
  QApplication::sendEvent(t, &help);
  return QToolTip::isVisible() ? QToolTip::text() : QString();
}

double span(const Viewport& vp) { return vp.end_ns() - vp.start_ns; }

}  // namespace

class TestViewerReadable : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void hoverShowsTheSliceAndTheCursorTime() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openSync({kGolden + "trainer_cpu_2ranks/pre"}, nullptr).isEmpty());
    TimelineWidget* t = w.timeline();
    const TimelineLayout& layout = *t->timelineLayout();
    // A unit's compute in a step: the tooltip has everything the issue asks for.
    auto sel = find_event(layout, [](const model::Rank& r, const model::Event& e) {
      return e.unit >= 0 && e.step >= 0 && e.dur_ns > 0 && e.cls == model::IntervalClass::Compute &&
             size_t(e.step) < r.steps.size();
    });
    QVERIFY(sel);
    const model::Rank& rank = *layout.ranks()[sel->rank].rank;
    const model::Event& e = rank.tracks[sel->event.track].events[sel->event.index];
    t->zoomTo(e.ts_ns, e.end_ns(), sel->rank, sel->event.track);
    auto rect = t->eventRect(sel->rank, sel->event);
    QVERIFY(rect);
    QPoint centre = rect->center().toPoint();
    QString tip = tooltip_at(t, centre);
    QVERIFY2(tip.contains(QString::fromUtf8(rank.str(e.name)).toHtmlEscaped()), qPrintable(tip));
    QVERIFY2(tip.contains("duration: " + format_ns(double(e.dur_ns))), qPrintable(tip));
    QVERIFY2(tip.contains("class: compute"), qPrintable(tip));
    QVERIFY2(tip.contains(QString("unit: %1").arg(e.unit)), qPrintable(tip));
    QVERIFY2(tip.contains(QString("step: %1").arg(rank.steps[size_t(e.step)].number)), qPrintable(tip));
    // Over the ruler there is nothing to say (QToolTip keeps its last text while it fades: asked directly).
    QVERIFY(t->toolTipAt(QPoint(centre.x(), 5)).isEmpty());

    // The cursor readout follows a plain mouse move (no button): the time under it, and the row's rank.
    QTest::mouseMove(t, centre);
    QTRY_VERIFY(!w.cursorReadout()->text().isEmpty());
    double at = t->viewport().ns_at(centre.x() - TimelineWidget::kLabelWidth) - double(layout.start_ns());
    QString text = w.cursorReadout()->text();
    QVERIFY2(text.contains("t = " + format_ns(at)), qPrintable(text + " / " + format_ns(at)));
    QVERIFY2(text.contains(QString("rank %1").arg(rank.rank)), qPrintable(text));
    // Moving right moves the readout's time.
    QTest::mouseMove(t, centre + QPoint(200, 0));
    QTRY_VERIFY(w.cursorReadout()->text() != text);
  }

  void counterRowsHaveAnAxisAndAValueUnderTheCursor() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openSync({kGolden + "trainer_cpu_2ranks/pre"}, nullptr).isEmpty());
    TimelineWidget* t = w.timeline();
    const TimelineLayout& layout = *t->timelineLayout();
    // The first counter row; scroll it into view with the wheel.
    int row = -1;
    for (size_t i = 0; i < t->rows().size() && row < 0; ++i)
      if (t->rows()[i].kind == RowKind::Counter) row = int(i);
    QVERIFY(row >= 0);
    const Row& r = t->rows()[size_t(row)];
    const model::CounterSeries& series = layout.ranks()[r.rank].rank->counters[size_t(r.item)];
    QVERIFY(series.samples.size() >= 2);
    QCOMPARE(counter_unit(series.name), CounterUnit::Bytes);  // memory.* series
    auto screen_y = [&] { return TimelineWidget::kRulerHeight + r.y - t->rowScroll(); };
    for (int i = 0; i < 200 && screen_y() + r.height > t->height(); ++i) {
      QWheelEvent wheel(QPointF(300, 100), t->mapToGlobal(QPointF(300, 100)), {}, QPoint(0, -120), Qt::NoButton,
                        Qt::ShiftModifier, Qt::NoScrollPhase, false);
      QApplication::sendEvent(t, &wheel);
    }
    QVERIFY(screen_y() >= TimelineWidget::kRulerHeight && screen_y() + r.height <= t->height());
    // The tooltip says the value the counter holds under the cursor, with its unit.
    const int x = TimelineWidget::kLabelWidth + t->viewport().width_px / 2, y = screen_y() + r.height / 2;
    std::optional<double> value = counter_value_at(series, t->viewport().ns_at(x - TimelineWidget::kLabelWidth));
    QVERIFY(value);
    QString tip = tooltip_at(t, QPoint(x, y));
    QVERIFY2(tip.contains(QString::fromStdString(series.name)), qPrintable(tip));
    QVERIFY2(tip.contains(QString::fromStdString(format_counter(*value, CounterUnit::Bytes))), qPrintable(tip));
    QVERIFY2(tip.contains("bytes"), qPrintable(tip));
    // The axis: its top (the peak) drawn at the plot's left edge, in the counter's unit: dark text over a
    // chart that is otherwise pale blue.
    QImage img(t->size(), QImage::Format_RGB32);
    t->render(&img);
    int dark = 0;
    for (int yy = screen_y(); yy < screen_y() + r.height / 2; ++yy)
      for (int xx = TimelineWidget::kLabelWidth + 2; xx < TimelineWidget::kLabelWidth + 70; ++xx)
        dark += qGray(img.pixel(xx, yy)) < 100;
    QVERIFY2(dark > 10, qPrintable(QString::number(dark)));
    CounterAxis axis = counter_axis(series);
    QCOMPARE(axis.max, series.peak());
    QCOMPARE(axis.min, 0.0);
  }

  void legendHasAColourForEachKind() {
    // The palette: each kind the issue names has its own colour, and every colour the timeline can draw is
    // in the legend.
    std::set<Rgb> colours;
    for (const LegendEntry& e : legend()) QVERIFY2(colours.insert(e.colour).second, e.name);
    using model::CollectiveKind;
    using model::IntervalClass;
    for (auto c : {IntervalClass::Host, IntervalClass::Compute, IntervalClass::Communication, IntervalClass::Memory,
                   IntervalClass::Sync, IntervalClass::Other})
      for (auto k : {CollectiveKind::None, CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
                     CollectiveKind::AllReduce, CollectiveKind::Broadcast})
        QVERIFY(colours.count(colour_of(c, k)));
    QVERIFY(colours.count(kCudaApi) && colours.count(kUserRange));
    QCOMPARE(host_kind("cuda_runtime"), HostKind::CudaApi);
    QCOMPARE(host_kind("cuda_driver"), HostKind::CudaApi);
    QCOMPARE(host_kind("user_annotation"), HostKind::UserRange);
    QCOMPARE(host_kind("gpu_user_annotation"), HostKind::UserRange);
    QCOMPARE(host_kind("cpu_op"), HostKind::Op);

    // The dock shows them: each swatch painted, in the window as it opens.
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* dock = w.findChild<QDockWidget*>("Legend");
    QVERIFY(dock && dock->isVisible());
    auto* legend_widget = dock->findChild<LegendWidget*>();
    QVERIFY(legend_widget);
    QImage img = legend_widget->grab().toImage();
    for (const LegendEntry& e : legend()) {
      int n = 0;
      for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) n += (img.pixel(x, y) & 0xFFFFFF) == e.colour;
      QVERIFY2(n >= 14 * 14, qPrintable(QString("%1: %2").arg(e.name).arg(n)));
    }
  }

  void gpuHostRowsAreNotOneGrey() {
    // On a Kineto trace the CUDA API calls and the user ranges get their own colours in the timeline's marks.
    MainWindow w;
    w.resize(1400, 900);
    QVERIFY(w.openSync({kGolden + "kineto_two_ranks"}, nullptr).isEmpty());
    const TimelineLayout& layout = *w.timeline()->timelineLayout();
    Viewport vp = Viewport::fit(layout.start_ns(), layout.end_ns(), 1200);
    std::map<Rgb, size_t> count;
    std::vector<Mark> marks;
    for (const RankView& rv : layout.ranks())
      for (size_t t = 0; t < rv.rank->tracks.size(); ++t) {
        if (rv.rank->tracks[t].kind != model::TrackKind::HostThread) continue;
        marks.clear();
        track_marks(rv.rank->tracks[t], rv.tracks[t], vp, marks, {.host_colours = &rv.host_colours});
        for (const Mark& m : marks) ++count[m.colour];
      }
    QVERIFY(count[kCudaApi] > 10);
    QVERIFY(count[kUserRange] > 0);
    QVERIFY(count[kHost] > 0);
  }

  void helpMenuListsTheKeysAndTheKeysWork() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openSync({kGolden + "gpu_demo/gpu_demo.json.gz"}, nullptr).isEmpty());
    QMenu* help = nullptr;
    for (QAction* a : w.menuBar()->actions())
      if (a->menu() && a->menu()->objectName() == "helpMenu") help = a->menu();
    QVERIFY(help);
    auto* keys = help->findChild<QAction*>("keyboardMapAction");
    QVERIFY(keys);
    keys->trigger();
    auto* browser = w.findChild<QTextBrowser*>("keyboardHelp");
    QVERIFY(browser);
    QTRY_VERIFY(browser->isVisible());
    const QString text = browser->toPlainText();
    for (const KeyBinding& k : keyboard_map()) {
      QVERIFY2(text.contains(QString::fromUtf8(k.keys)), k.keys);
      QVERIFY2(text.contains(QString::fromUtf8(k.action)), k.action);
    }
    browser->hide();

    // Each timeline key does what the map says.
    TimelineWidget* t = w.timeline();
    t->setFocus();
    const double whole = span(t->viewport());
    QTest::keyClick(t, Qt::Key_W);
    QVERIFY(std::abs(span(t->viewport()) - 0.8 * whole) < 1e-6 * whole);
    QTest::keyClick(t, Qt::Key_W);
    double zoomed = span(t->viewport());
    double start = t->viewport().start_ns;
    QTest::keyClick(t, Qt::Key_D);
    QVERIFY(t->viewport().start_ns > start);
    QTest::keyClick(t, Qt::Key_A);
    QVERIFY(std::abs(t->viewport().start_ns - start) < 1e-6 * whole);
    QTest::keyClick(t, Qt::Key_S);
    QVERIFY(span(t->viewport()) > zoomed);
    QTest::keyClick(t, Qt::Key_0);
    QVERIFY(std::abs(span(t->viewport()) - whole) < 1e-6 * whole);
  }

  void longKernelNameKeepsTheDockWidth() {
    // A 500-character template kernel name, as PyTorch's cutlass kernels have.
    QString name = "void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_relu_bf16_";
    while (name.size() < 500) name += "Shape<128, 256, 64>, Policy<Stages<3>, Swizzle<8>>, ";
    name = name.left(499) + ">";
    QTemporaryDir dir;
    QString path = dir.filePath("long_name.json");
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(
          QString(
              R"({"traceEvents": [)"
              R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 0, "dur": 5, "args": {"correlation": 1}},)"
              R"({"ph": "X", "cat": "kernel", "name": "%1", "pid": 0, "tid": 7, "ts": 10, "dur": 200, "args": {"stream": 7, "correlation": 1}},)"
              R"({"ph": "X", "cat": "kernel", "name": "short", "pid": 0, "tid": 7, "ts": 300, "dur": 50, "args": {"stream": 7}}]})")
              .arg(name)
              .toUtf8());
    }
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openSync({path}, nullptr).isEmpty());
    QApplication::processEvents();
    auto* dock = w.findChild<EventDock*>();
    QVERIFY(dock);
    const int timeline_before = w.timeline()->width(), dock_before = dock->width();
    QVERIFY(timeline_before > 800);
    QVERIFY(w.selectByName(name));
    QApplication::processEvents();
    QTest::qWait(50);
    // The whole name, selectable and read-only; the dock and the timeline keep their widths.
    QCOMPARE(dock->name(), name);
    auto* edit = dock->findChild<QLineEdit*>("eventName");
    QVERIFY(edit && edit->isReadOnly());
    QCOMPARE(w.timeline()->width(), timeline_before);
    QCOMPARE(dock->width(), dock_before);
    QVERIFY(dock->width() <= EventDock::kWidth + 40);
    // The details table elides the name where it repeats it (the launch row), and says the duration.
    QVERIFY2(dock->details().contains("duration"), qPrintable(dock->details()));
    // A click in empty time clears the dock.
    TimelineWidget* t = w.timeline();
    QTest::mouseClick(t, Qt::LeftButton, {}, QPoint(t->width() - 5, t->height() - 5));
    QTRY_VERIFY(dock->name().isEmpty());
  }
};

QTEST_MAIN(TestViewerReadable)
#include "tst_viewer_readable.moc"
