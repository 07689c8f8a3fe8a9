// One selection: the timeline holds none of its own. Set from outside (as a dock or the search bar does),
// SelectionModel's event, range and hits are what the timeline draws, and nothing once cleared; the
// timeline's clicks, Shift+drags, Esc and jumps write the model. No MainWindow: the widget and a model only.
#include <QtTest>

#include <QStandardPaths>

#include <memory>

#include "viewer/app/loader.h"
#include "viewer/app/selection_model.h"
#include "viewer/app/timeline_widget.h"
#include "viewer/model/search.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {
const QString kGolden = SHARDSCOPE_SOURCE_DIR "/tests/golden/";

// How many pixels differ between two pictures of the same size.
int differing(const QImage& a, const QImage& b) {
  int n = 0;
  for (int y = 0; y < a.height(); ++y)
    for (int x = 0; x < a.width(); ++x) n += a.pixel(x, y) != b.pixel(x, y);
  return n;
}
}  // namespace

class TestViewerSelection : public QObject {
  Q_OBJECT
  std::shared_ptr<analysis::AnalysedRun> run_;
  std::unique_ptr<TimelineLayout> layout_;
  EventSelection collective_;  // a collective on rank 0, with a duration
  std::unique_ptr<SelectionModel> sel_;
  std::unique_ptr<TimelineWidget> t_;

  const model::Event& collective() const {
    return run_->trace.ranks[collective_.rank].tracks[collective_.event.track].events[collective_.event.index];
  }
  QImage picture() const { return t_->grab().toImage(); }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    LoadOutcome o = load_run({kGolden + "kineto_two_ranks"});
    QVERIFY(o.run);
    run_ = o.run;
    layout_ = std::make_unique<TimelineLayout>(run_->trace);
    const model::Rank& r0 = run_->trace.ranks[0];
    bool found = false;
    for (uint32_t t = 0; t < r0.tracks.size() && !found; ++t)
      for (uint32_t i = 0; i < r0.tracks[t].events.size() && !found; ++i) {
        const model::Event& e = r0.tracks[t].events[i];
        if (e.cls == model::IntervalClass::Communication && e.ph == 'X' && e.dur_ns > 0) {
          collective_ = {0, {t, i}};
          found = true;
        }
      }
    QVERIFY(found);
  }

  // A fresh model and timeline for each test, the collective in view, nothing selected.
  void init() {
    sel_ = std::make_unique<SelectionModel>();
    sel_->setRun(run_.get(), layout_.get());
    t_ = std::make_unique<TimelineWidget>(sel_.get());
    t_->resize(1200, 700);
    t_->show();
    QVERIFY(QTest::qWaitForWindowExposed(t_.get()));
    t_->setTimeline(layout_.get());
    t_->zoomTo(collective().ts_ns, collective().end_ns(), collective_.rank, collective_.event.track);
    QVERIFY(t_->eventRect(collective_.rank, collective_.event));
  }

  void cleanup() {
    t_.reset();
    sel_.reset();
  }

  void anEventSetFromOutsideIsOutlinedAndGoesWhenCleared() {
    const QImage before = picture();
    sel_->setEvent(collective_);
    const QImage with = picture();
    const QRectF r = *t_->eventRect(collective_.rank, collective_.event);
    // The outline's left edge, half way down the slice: black, where the slice's colour was.
    const QPoint edge(int(r.left()), int(r.center().y()));
    QVERIFY2(qGray(with.pixel(edge)) < 40, qPrintable(QString::number(qGray(with.pixel(edge)))));
    QVERIFY(qGray(before.pixel(edge)) >= 40);
    sel_->setEvent(std::nullopt);
    QCOMPARE(differing(picture(), before), 0);
  }

  void aRangeSetFromOutsideIsTintedAndEscClearsIt() {
    const QImage before = picture();
    sel_->setRange(TimeRange{0, collective().ts_ns, collective().end_ns()});
    QVERIFY(differing(picture(), before) > 0);
    // F zooms to the model's range.
    t_->setFocus();
    QTest::keyClick(t_.get(), Qt::Key_F);
    QVERIFY(std::abs(t_->viewport().start_ns - double(collective().ts_ns)) < 1.0);
    QTest::keyClick(t_.get(), Qt::Key_Escape);
    QVERIFY(!sel_->range());
  }

  void searchHitsSetFromOutsideAreOutlined() {
    const QImage before = picture();
    const SearchResult hits = search_names(*layout_, run_->trace.ranks[0].str(collective().name));
    QVERIFY(!hits.hits.empty());
    sel_->setHighlights(&hits);
    QVERIFY(differing(picture(), before) > 0);
    sel_->setHighlights(nullptr);
    QCOMPARE(differing(picture(), before), 0);
  }

  void clicksAndShiftDragsWriteTheModel() {
    QSignalSpy across(sel_.get(), &SelectionModel::acrossRanksRequested);
    const QRectF r = *t_->eventRect(collective_.rank, collective_.event);
    QTest::mouseClick(t_.get(), Qt::LeftButton, {}, r.center().toPoint());
    QVERIFY(sel_->event());
    QCOMPARE(sel_->event()->rank, collective_.rank);
    QVERIFY(sel_->event()->event == collective_.event);
    QCOMPARE(across.count(), 1);  // a collective: its instance on every rank too
    // A click on a group's header, where no event is: nothing selected.
    int header = -1;
    for (size_t i = 0; i < t_->rows().size() && header < 0; ++i)
      if (t_->rows()[i].kind == RowKind::Group && t_->rowTop(int(i)) > TimelineWidget::kRulerHeight &&
          t_->rowTop(int(i)) + 4 < t_->height())
        header = int(i);
    QVERIFY(header >= 0);
    QTest::mouseClick(t_.get(), Qt::LeftButton, {}, QPoint(int(r.center().x()), t_->rowTop(header) + 2));
    QVERIFY(!sel_->event());
    // Shift+drag across the collective's row: the range, on its rank.
    const QPoint a(t_->labelWidth() + 100, int(r.center().y())), b(t_->labelWidth() + 500, int(r.center().y()));
    QTest::mousePress(t_.get(), Qt::LeftButton, Qt::ShiftModifier, a);
    QTest::mouseMove(t_.get(), b);
    QVERIFY(!sel_->range());  // written on the release, not while dragging
    QTest::mouseRelease(t_.get(), Qt::LeftButton, Qt::ShiftModifier, b);
    QVERIFY(sel_->range());
    QCOMPARE(sel_->range()->rank, collective_.rank);
    QVERIFY(sel_->range()->lo < sel_->range()->hi);
  }

  void aJumpMovesTheViewAndSelects() {
    t_->zoomToAll();
    const model::Event& e = collective();
    sel_->requestJump(collective_.rank, collective_.event.track, e.ts_ns, e.end_ns(), collective_.event);
    QVERIFY(sel_->event());
    QVERIFY(sel_->event()->event == collective_.event);
    QVERIFY(t_->viewport().start_ns <= double(e.ts_ns));
    QVERIFY(t_->viewport().end_ns() >= double(e.end_ns()));
    QVERIFY(t_->viewport().end_ns() - t_->viewport().start_ns < 2.0 * double(e.dur_ns));
  }
};

QTEST_MAIN(TestViewerSelection)
#include "tst_viewer_selection.moc"
