// The "FSDP units" rows in the real window (offscreen) on the H100 trainer trace (one rank, 13 units): the
// group open on arrival, a click on its label folding it into one painted summary lane and a second click
// opening it, and a click on an all-gather in a unit's row selecting the real event (the Event dock names
// it, the tooltip gives its unit).
#include <QtTest>

#include <QHelpEvent>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSettings>
#include <QTemporaryDir>
#include <QToolTip>

#include <memory>

#include "viewer/app/docks/event_dock.h"
#include "viewer/app/main_window.h"
#include "viewer/app/selection_model.h"
#include "viewer/app/timeline_widget.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {

const QString kTrace = SHARDSCOPE_SOURCE_DIR "/tests/data/h100_shardscope/train_small_full_shard.rank0.json.gz";

int find_row(const TimelineWidget* t, const QString& label, RowKind kind) {
  for (size_t i = 0; i < t->rows().size(); ++i)
    if (t->rows()[i].kind == kind && QString::fromStdString(t->rows()[i].label) == label) return int(i);
  return -1;
}

int inked_in(TimelineWidget* t, int row) {
  QImage img = t->grab().toImage();
  int y = t->rowTop(row) + t->rows()[size_t(row)].height / 2, inked = 0;
  if (y < TimelineWidget::kRulerHeight || y >= img.height()) return -1;  // not on screen
  for (int x = t->labelWidth(); x < t->labelWidth() + t->viewport().width_px; ++x)
    inked += qGray(img.pixel(x, y)) < 200;
  return inked;
}

}  // namespace

class TestViewerUnits : public QObject {
  Q_OBJECT
  QTemporaryDir settings_dir_;
  std::unique_ptr<MainWindow> w_;
  TimelineWidget* t_ = nullptr;

 private slots:
  void initTestCase() {
    QVERIFY(settings_dir_.isValid());
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings_dir_.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings_dir_.path());
    QSettings("shardscope", "viewer").clear();
    w_ = std::make_unique<MainWindow>();
    w_->setWarningSink([](const QString&, const QString&) {});
    w_->resize(1400, 900);
    w_->show();
    QVERIFY(QTest::qWaitForWindowExposed(w_.get()));
    QVERIFY(w_->openSync({kTrace}, nullptr).isEmpty());
    t_ = w_->timeline();
  }

  void groupFoldsAndOpens() {
    const int group = find_row(t_, "FSDP units (13)", RowKind::Group);
    QVERIFY(group >= 0);
    QVERIFY(!t_->arrangement().collapsed(t_->rows()[size_t(group)]));  // open on arrival
    // The group's header at the top of the rows (below it are 13 units and the counters).
    t_->rowScrollBar()->setValue(t_->rows()[size_t(group)].y);
    QCOMPARE(t_->rowTop(group), TimelineWidget::kRulerHeight);
    QVERIFY(find_row(t_, "unit 1 · block0", RowKind::Derived) > group);
    const int unit_inked = inked_in(t_, find_row(t_, "unit 1 · block0", RowKind::Derived));
    QVERIFY2(unit_inked > 0, qPrintable(QString::number(unit_inked)));
    // A click on the group's label folds it into one lane, painted where the units are busy.
    QTest::mouseClick(t_, Qt::LeftButton, {}, {30, t_->rowTop(group) + 5});
    QVERIFY(t_->arrangement().collapsed(t_->rows()[size_t(group)]));
    QCOMPARE(find_row(t_, "unit 1 · block0", RowKind::Derived), -1);
    const int inked = inked_in(t_, group);
    QVERIFY2(inked > 20, qPrintable(QString::number(inked)));
    // A second click opens it again.
    QTest::mouseClick(t_, Qt::LeftButton, {}, {30, t_->rowTop(group) + 5});
    QVERIFY(!t_->arrangement().collapsed(t_->rows()[size_t(group)]));
    QVERIFY(find_row(t_, "unit 1 · block0", RowKind::Derived) >= 0);
  }

  void clickInAUnitRowSelectsTheRealEvent() {
    const int row = find_row(t_, "unit 1 · block0", RowKind::Derived);
    QVERIFY(row >= 0);
    const Row& r = t_->rows()[size_t(row)];
    const RankView& rv = t_->timelineLayout()->ranks()[r.rank];
    const DerivedRow& d = rv.derived[size_t(r.item)];
    // The unit's first all-gather: zoomed to it, then clicked in the unit's row (not on its own track).
    uint32_t pos = 0;
    while (pos < d.refs.size() &&
           rv.rank->tracks[d.refs[pos].track].events[d.refs[pos].index].coll != model::CollectiveKind::AllGather)
      ++pos;
    QVERIFY(pos < d.refs.size());
    const model::EventRef ref = d.refs[pos];
    const model::Event& e = rv.rank->tracks[ref.track].events[ref.index];
    t_->zoomTo(e.ts_ns, e.end_ns(), r.rank, ref.track);
    const int at_row = find_row(t_, "unit 1 · block0", RowKind::Derived);
    QVERIFY(at_row >= 0);
    const int lane_h = t_->timelineLayout()->options().lane_height;
    const QPoint click(t_->labelWidth() + int(t_->viewport().x_of(double(e.ts_ns) + double(e.dur_ns) / 2)),
                       t_->rowTop(at_row) + d.depth[pos] * lane_h + lane_h / 2);
    QCOMPARE(t_->rowAtPos(click), at_row);
    QTest::mouseClick(t_, Qt::LeftButton, {}, click);
    SelectionModel* sel = w_->selection();
    QVERIFY(sel->event());
    QCOMPARE(sel->event()->event.track, ref.track);
    QCOMPARE(sel->event()->event.index, ref.index);
    auto* dock = w_->findChild<EventDock*>();
    QCOMPARE(dock->name(), QString::fromUtf8(rv.rank->str(e.name)));
    QVERIFY2(QRegularExpression("unit\\W+1\\b").match(dock->details()).hasMatch(), qPrintable(dock->details()));
    // Hovering the same slice names its unit.
    QToolTip::hideText();
    QHelpEvent help(QEvent::ToolTip, click, t_->mapToGlobal(click));
    QApplication::sendEvent(t_, &help);
    QVERIFY(QToolTip::isVisible());
    QVERIFY2(QToolTip::text().contains("unit: 1"), qPrintable(QToolTip::text()));
  }

  void cleanupTestCase() { w_.reset(); }
};

QTEST_MAIN(TestViewerUnits)
#include "tst_viewer_units.moc"
