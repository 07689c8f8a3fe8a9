// The timeline's rows arranged as a person does it, in the real window (offscreen) on a real 2-rank H100
// run with many CUDA API threads: what is folded on open, a click on a group's label folding it, a label
// dragged to reorder, hiding and showing from the label's menu, pinning, the row filter, the scrollbar,
// the label column dragged narrower with the full name on hover, and the arrangement back on reopening the
// run (QSettings in a temporary folder).
#include <QtTest>

#include <QFile>
#include <QHelpEvent>
#include <QLineEdit>
#include <QMenu>
#include <QScrollBar>
#include <QSettings>
#include <QTemporaryDir>
#include <QToolTip>

#include <memory>

#include "viewer/app/main_window.h"
#include "viewer/app/timeline_widget.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {

const QString kRun = SHARDSCOPE_SOURCE_DIR "/tests/data/h100_nccl2/shardscope_train_pre";
const QString kOtherRun = SHARDSCOPE_SOURCE_DIR "/tests/data/h100_nccl2/shardscope_train_none";

// The arranged row of rank `rank` (layout index) labelled `label`, or -1.
int find_row(const TimelineWidget* t, uint32_t rank, const QString& label) {
  for (size_t i = 0; i < t->rows().size(); ++i)
    if (t->rows()[i].rank == rank && QString::fromStdString(t->rows()[i].label) == label) return int(i);
  return -1;
}

int find_row_starting(const TimelineWidget* t, uint32_t rank, const QString& prefix, RowKind kind) {
  for (size_t i = 0; i < t->rows().size(); ++i)
    if (t->rows()[i].rank == rank && t->rows()[i].kind == kind &&
        QString::fromStdString(t->rows()[i].label).startsWith(prefix))
      return int(i);
  return -1;
}

QPoint label_of(const TimelineWidget* t, int row) { return {30, t->rowTop(row) + 5}; }

QStringList labels(const TimelineWidget* t) {
  QStringList out;
  for (const Row& r : t->rows()) out << QString::number(r.rank) + ":" + QString::fromStdString(r.label);
  return out;
}

void trigger(TimelineWidget* t, QPoint pos, const char* action) {
  std::unique_ptr<QMenu> menu(t->rowMenu(pos));
  auto* a = menu->findChild<QAction*>(action);
  QVERIFY2(a, action);
  QVERIFY2(a->isEnabled(), action);
  a->trigger();
}

QString tooltip_at(TimelineWidget* t, QPoint pos) {
  QToolTip::hideText();
  QHelpEvent help(QEvent::ToolTip, pos, t->mapToGlobal(pos));
  QApplication::sendEvent(t, &help);
  return QToolTip::isVisible() ? QToolTip::text() : QString();
}

}  // namespace

class TestViewerRows : public QObject {
  Q_OBJECT
  QTemporaryDir settings_dir_;
  std::unique_ptr<MainWindow> w_;
  TimelineWidget* t_ = nullptr;

  void open(const QString& run) {
    w_ = std::make_unique<MainWindow>();
    w_->setWarningSink([](const QString&, const QString&) {});
    w_->resize(1400, 900);
    w_->show();
    QVERIFY(QTest::qWaitForWindowExposed(w_.get()));
    QVERIFY(w_->openSync({run}, nullptr).isEmpty());
    t_ = w_->timeline();
    QCOMPARE(t_->timelineLayout()->ranks().size(), size_t(2));
  }

 private slots:
  void initTestCase() {
    QVERIFY(settings_dir_.isValid());
    // Nothing of the user's own settings is read or written.
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings_dir_.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings_dir_.path());
  }

  // Each case starts from a run never arranged before.
  void init() { QSettings("shardscope", "viewer").clear(); }

  void defaultsFoldTheHostSide() {
    open(kRun);
    for (uint32_t r = 0; r < 2; ++r) {
      // Ten and more CUDA API threads a rank: one folded row; the streams shown.
      int api = find_row_starting(t_, r, "CUDA API threads (", RowKind::Group);
      QVERIFY(api >= 0);
      QVERIFY(t_->arrangement().collapsed(t_->rows()[size_t(api)]));
      QCOMPARE(find_row_starting(t_, r, "CUDA API thread ", RowKind::Track), -1);
      QVERIFY(find_row(t_, r, "GPU 0 stream 7") >= 0);
      QVERIFY(find_row_starting(t_, r, "comm: ", RowKind::Track) >= 0);
    }
    // The folded group's lane is painted: its summary is not blank.
    int api = find_row_starting(t_, 0, "CUDA API threads (", RowKind::Group);
    QImage img = t_->grab().toImage();
    int y = t_->rowTop(api) + t_->rows()[size_t(api)].height / 2, inked = 0;
    for (int x = t_->labelWidth(); x < t_->labelWidth() + t_->viewport().width_px; ++x)
      inked += qGray(img.pixel(x, y)) < 200;
    QVERIFY2(inked > 20, qPrintable(QString::number(inked)));
  }

  void clickingAGroupLabelFoldsIt() {
    open(kRun);
    int streams = find_row_starting(t_, 0, "GPU streams (", RowKind::Group);
    QVERIFY(streams >= 0);
    const int rank1 = find_row(t_, 1, "rank 1");
    const int before = t_->rowTop(rank1);
    const int first_stream = streams + 1, after_streams = find_row_starting(t_, 0, "communication (", RowKind::Group);
    const int streams_height = t_->rows()[size_t(after_streams)].y - t_->rows()[size_t(first_stream)].y;
    QTest::mouseClick(t_, Qt::LeftButton, {}, label_of(t_, streams));
    QCOMPARE(find_row(t_, 0, "GPU 0 stream 7"), -1);
    QCOMPARE(t_->rowTop(find_row(t_, 1, "rank 1")), before - streams_height);
    QVERIFY(find_row(t_, 1, "GPU 0 stream 7") >= 0);  // the other rank's stay
    // Clicked again: open again.
    QTest::mouseClick(t_, Qt::LeftButton, {}, label_of(t_, find_row_starting(t_, 0, "GPU streams (", RowKind::Group)));
    QVERIFY(find_row(t_, 0, "GPU 0 stream 7") >= 0);
    QCOMPARE(t_->rowTop(find_row(t_, 1, "rank 1")), before);
  }

  void draggingALabelReorders() {
    open(kRun);
    int s7 = find_row(t_, 0, "GPU 0 stream 7"), s13 = find_row(t_, 0, "GPU 0 stream 13");
    QVERIFY(s7 >= 0 && s13 >= 0);
    const int top = std::min(s7, s13), bottom = std::max(s7, s13);
    const QString moved = QString::fromStdString(t_->rows()[size_t(bottom)].label);
    QTest::mousePress(t_, Qt::LeftButton, {}, label_of(t_, bottom));
    QTest::mouseMove(t_, label_of(t_, bottom) - QPoint(0, 10));
    QTest::mouseMove(t_, label_of(t_, top));
    QTest::mouseRelease(t_, Qt::LeftButton, {}, label_of(t_, top));
    QCOMPARE(QString::fromStdString(t_->rows()[size_t(top)].label), moved);
    // Onto another group: nothing moves.
    const QStringList was = labels(t_);
    int comm = find_row_starting(t_, 0, "comm: ", RowKind::Track);
    QTest::mousePress(t_, Qt::LeftButton, {}, label_of(t_, comm));
    QTest::mouseMove(t_, label_of(t_, comm) - QPoint(0, 10));
    QTest::mouseMove(t_, label_of(t_, top));
    QTest::mouseRelease(t_, Qt::LeftButton, {}, label_of(t_, top));
    QCOMPARE(labels(t_), was);
  }

  void hideShowAndPin() {
    open(kRun);
    int s7 = find_row(t_, 0, "GPU 0 stream 7");
    trigger(t_, label_of(t_, s7), "hideRow");
    QCOMPARE(find_row(t_, 0, "GPU 0 stream 7"), -1);
    QVERIFY(find_row_starting(t_, 0, "GPU streams (", RowKind::Group) >= 0);
    QVERIFY(QString::fromStdString(t_->rows()[size_t(find_row_starting(t_, 0, "GPU streams (", RowKind::Group))].label)
                .endsWith("1 hidden"));
    trigger(t_, label_of(t_, 0), "showHidden");
    QVERIFY(find_row(t_, 0, "GPU 0 stream 7") >= 0);

    // Rank 1's NCCL stream pinned: first, above rank 0, and it stays there while the rows scroll.
    int nccl = find_row(t_, 1, "GPU 0 stream 7");
    trigger(t_, label_of(t_, nccl), "pinRow");
    QCOMPARE(QString::fromStdString(t_->rows()[0].label), QString("r1 · GPU 0 stream 7"));
    QCOMPARE(t_->rowTop(0), TimelineWidget::kRulerHeight);
    const int rank0 = find_row(t_, 0, "rank 0");
    const int before = t_->rowTop(rank0);
    QScrollBar* bar = t_->rowScrollBar();
    QVERIFY(bar->maximum() > 100);
    bar->setValue(100);
    QCOMPARE(t_->rowScroll(), 100);
    QCOMPARE(t_->rowTop(rank0), before - 100);
    QCOMPARE(t_->rowTop(0), TimelineWidget::kRulerHeight);
    // What is under the pinned row is the pinned row, not the one scrolled beneath it.
    QCOMPARE(t_->rowAtPos(QPoint(400, TimelineWidget::kRulerHeight + 3)), 0);
  }

  void scrollbarScrollsTheRows() {
    open(kRun);
    QScrollBar* bar = t_->rowScrollBar();
    QVERIFY(bar->isVisible());
    QVERIFY(bar->maximum() > 0);
    bar->setValue(bar->maximum());
    QCOMPARE(t_->rowScroll(), bar->maximum());
    const Row& last = t_->rows().back();
    const int bottom = t_->rowTop(int(t_->rows().size() - 1)) + last.height;
    QVERIFY2(bottom <= t_->height() && bottom > t_->height() - 40, qPrintable(QString::number(bottom)));
    // Shift+wheel moves the bar with it.
    QWheelEvent wheel(QPointF(300, 300), t_->mapToGlobal(QPointF(300, 300)), {}, QPoint(0, 120), Qt::NoButton,
                      Qt::ShiftModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(t_, &wheel);
    QVERIFY(t_->rowScroll() < bar->maximum());
    QCOMPARE(bar->value(), t_->rowScroll());
  }

  void filterByName() {
    open(kRun);
    auto* filter = w_->findChild<QLineEdit*>("rowFilter");
    QVERIFY(filter);
    filter->setText("cuda api thread 16");
    // Matching API threads show although their group is folded; other tracks go.
    QVERIFY(find_row_starting(t_, 0, "CUDA API thread 16", RowKind::Track) >= 0);
    QCOMPARE(find_row(t_, 0, "GPU 0 stream 7"), -1);
    for (const Row& r : t_->rows())
      if (r.kind == RowKind::Track) QVERIFY(QString::fromStdString(r.label).startsWith("CUDA API thread 16"));
    filter->clear();
    QVERIFY(find_row(t_, 0, "GPU 0 stream 7") >= 0);
    QCOMPARE(find_row_starting(t_, 0, "CUDA API thread ", RowKind::Track), -1);
  }

  void labelColumnResizesAndNamesOnHover() {
    open(kRun);
    const int y = t_->rowTop(find_row(t_, 0, "GPU 0 stream 7")) + 4;
    QTest::mousePress(t_, Qt::LeftButton, {}, QPoint(TimelineWidget::kLabelWidth, y));
    QTest::mouseMove(t_, QPoint(TimelineWidget::kLabelWidth - 20, y));
    QTest::mouseMove(t_, QPoint(20, y));
    QTest::mouseRelease(t_, Qt::LeftButton, {}, QPoint(20, y));
    QCOMPARE(t_->labelWidth(), TimelineWidget::kMinLabelWidth);
    QCOMPARE(t_->viewport().width_px, t_->width() - TimelineWidget::kMinLabelWidth - t_->rowScrollBar()->width());
    // A narrow column cuts "comm: reduce-scatter"; hovering it gives the whole name.
    int comm = find_row(t_, 0, "comm: reduce-scatter");
    QVERIFY(comm >= 0);
    QString tip = tooltip_at(t_, label_of(t_, comm));
    QVERIFY2(tip.contains("comm: reduce-scatter"), qPrintable(tip));
    // A group's label says what a click does.
    tip = tooltip_at(t_, label_of(t_, find_row_starting(t_, 0, "CUDA API threads (", RowKind::Group)));
    QVERIFY2(tip.contains("click to expand"), qPrintable(tip));
  }

  void arrangementComesBackWithTheRun() {
    open(kRun);
    const QStringList defaults = labels(t_);
    QTest::mouseClick(t_, Qt::LeftButton, {},
                      label_of(t_, find_row_starting(t_, 1, "CUDA API threads (", RowKind::Group)));
    trigger(t_, label_of(t_, find_row(t_, 1, "GPU 0 stream 7")), "pinRow");
    trigger(t_, label_of(t_, find_row(t_, 0, "GPU 0 stream 13")), "hideRow");
    const int y = t_->rowTop(find_row(t_, 0, "GPU 0 stream 7")) + 4;
    QTest::mousePress(t_, Qt::LeftButton, {}, QPoint(TimelineWidget::kLabelWidth + 1, y));
    QTest::mouseMove(t_, QPoint(200, y));
    QTest::mouseMove(t_, QPoint(230, y));
    QTest::mouseRelease(t_, Qt::LeftButton, {}, QPoint(230, y));
    QCOMPARE(t_->labelWidth(), 230);
    const QStringList arranged = labels(t_);
    QVERIFY(arranged != defaults);

    open(kRun);  // a new window, the same run directory
    QCOMPARE(labels(t_), arranged);
    QCOMPARE(t_->labelWidth(), 230);
    // Another run keeps its own (here, the defaults).
    open(kOtherRun);
    QVERIFY(find_row_starting(t_, 1, "CUDA API thread ", RowKind::Track) < 0);
    QVERIFY(!QString::fromStdString(t_->rows()[0].label).startsWith("r1 · "));
    // Reset: the defaults, saved as such.
    open(kRun);
    trigger(t_, label_of(t_, 0), "resetRows");
    QCOMPARE(labels(t_), defaults);
    open(kRun);
    QCOMPARE(labels(t_), defaults);
    QCOMPARE(t_->labelWidth(), int(TimelineWidget::kLabelWidth));
  }

  void overlappingKernelsTakeFourLanes() {
    // Ten kernels on one stream, each overlapping the one before (a Kineto trace written here): four lanes,
    // the last holding seven, its label "+6" and its hover saying so; a click there still finds a kernel.
    QTemporaryDir dir;
    QString path = dir.filePath("overlap.json");
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      QString events;
      for (int i = 0; i < 10; ++i)
        events +=
            QString(
                R"(%1{"ph": "X", "cat": "kernel", "name": "k%2", "pid": 0, "tid": 7, "ts": %3, "dur": 1000, "args": {"stream": 7}})")
                .arg(i ? "," : "")
                .arg(i)
                .arg(i * 10);
      f.write(("{\"traceEvents\": [" + events + "]}").toUtf8());
    }
    w_ = std::make_unique<MainWindow>();
    w_->resize(1400, 900);
    w_->show();
    QVERIFY(QTest::qWaitForWindowExposed(w_.get()));
    QVERIFY(w_->openSync({path}, nullptr).isEmpty());
    t_ = w_->timeline();
    int row = find_row_starting(t_, 0, "", RowKind::Track);
    QVERIFY(row >= 0);
    const Row& r = t_->rows()[size_t(row)];
    QCOMPARE(r.lanes, kMaxLanes);
    QCOMPARE(r.folded, 6u);
    const int lane_h = t_->timelineLayout()->options().lane_height;
    const int last_lane_y = t_->rowTop(row) + (kMaxLanes - 1) * lane_h + lane_h / 2;
    QString tip = tooltip_at(t_, QPoint(30, last_lane_y));
    QVERIFY2(tip.contains("6 overlapping slices from 6 deeper lanes"), qPrintable(tip));
    QVERIFY(!tooltip_at(t_, QPoint(30, t_->rowTop(row) + lane_h / 2)).contains("overlapping"));
    // The +6 badge is painted on that lane, inside the label column.
    QImage img = t_->grab().toImage();
    const QRgb badge = QColor(0xFF, 0xE0, 0xA0).rgb();
    int n = 0;
    for (int x = 0; x < t_->labelWidth(); ++x) n += img.pixel(x, last_lane_y) == badge;
    QVERIFY2(n > 3, qPrintable(QString::number(n)));
    // A kernel's tooltip in the folded lane says the lane holds more.
    const int x = t_->labelWidth() + int(t_->viewport().x_of(double(t_->timelineLayout()->start_ns()) + 500e3));
    tip = tooltip_at(t_, QPoint(x, last_lane_y));
    QVERIFY2(tip.contains("<b>k") && tip.contains("overlapping"), qPrintable(tip));
  }

  void cleanupTestCase() { w_.reset(); }
};

QTEST_MAIN(TestViewerRows)
#include "tst_viewer_rows.moc"
