// The real viewer, run as a user would run it: `shardscope-viewer --screenshot` on the golden runs, then the
// picture checked region by region (the palette's colours in the timeline, text in the rank labels), and
// bad input answered with exit code 2 and a message naming the file. The platform comes from the
// environment: offscreen, or xcb under xvfb-run.
#include <QtTest>

#include <QImage>
#include <QProcess>
#include <QTemporaryDir>

#include "tests/viewer/viewer_test_support.h"
#include "viewer/model/palette.h"

using namespace shardscope::viewer;

namespace {

constexpr int kLabelWidth = 150;  // TimelineWidget::kLabelWidth

struct Run {
  int code = -1;
  QString err;
};

Run run_viewer(const QStringList& args) {
  QProcess p;
  p.start(SHARDSCOPE_VIEWER, args);
  if (!p.waitForFinished(90'000)) return {};
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromLocal8Bit(p.readAllStandardError())};
}

int count_colour(const QImage& img, QRect region, Rgb colour) {
  int n = 0;
  region &= img.rect();
  for (int y = region.top(); y <= region.bottom(); ++y)
    for (int x = region.left(); x <= region.right(); ++x)
      if ((img.pixel(x, y) & 0xFFFFFF) == colour) ++n;
  return n;
}

int count_dark(const QImage& img, QRect region) {
  int n = 0;
  region &= img.rect();
  for (int y = region.top(); y <= region.bottom(); ++y)
    for (int x = region.left(); x <= region.right(); ++x)
      if (qGray(img.pixel(x, y)) < 110) ++n;
  return n;
}

}  // namespace

class TestViewerScreenshot : public QObject {
  Q_OBJECT
 private slots:
  void kinetoTwoRanks() {
    QTemporaryDir dir;
    QString png = dir.filePath("out.png");
    Run r =
        run_viewer({"--screenshot", png, "--size", "1200x800", SHARDSCOPE_SOURCE_DIR "/tests/golden/kineto_two_ranks"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QImage img(png);
    QCOMPARE(img.size(), QSize(1200, 800));
    // The timeline sits right of the labels and left of the docks: compute kernels in orange, NCCL kernels in
    // a communication colour (this run's are send/recv), host ranges in grey.
    QRect timeline(kLabelWidth, 40, 700, 500);
    QVERIFY2(count_colour(img, timeline, kCompute) > 200, "no compute colour in the timeline");
    int comm = count_colour(img, timeline, kAllGather) + count_colour(img, timeline, kReduceScatter) +
               count_colour(img, timeline, kAllReduce) + count_colour(img, timeline, kOtherCollective);
    QVERIFY2(comm > 200, "no communication colour in the timeline");
    QVERIFY(count_colour(img, timeline, kHost) > 1000);
    // A GPU run opens with its host threads folded into one summary lane a rank, each pixel in the colour
    // covering most of it: here the user ranges' taupe, apart from the CPU ops' grey. (The CUDA API calls'
    // own colour is checked on the marks, tst_viewer_readable's gpuHostRowsAreNotOneGrey.)
    QVERIFY2(count_colour(img, timeline, kUserRange) > 200, "no user range colour in the folded host lane");
    // The palette's colours stay out of the label column, which holds the rank and track names.
    QRect labels(0, 40, kLabelWidth - 2, 500);
    QCOMPARE(count_colour(img, labels, kCompute), 0);
    QVERIFY2(count_dark(img, labels) > 300, "the rank labels' column is blank");
  }

  void selectShowsDetails() {
    QTemporaryDir dir;
    QString png = dir.filePath("sel.png");
    Run r = run_viewer({"--screenshot", png, "--size", "1200x800", "--select", "ProfilerStep#552",
                        SHARDSCOPE_SOURCE_DIR "/tests/golden/kineto_two_ranks"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(!r.err.contains("no event named"), qPrintable(r.err));
    QImage img(png);
    // The details dock (right of the timeline) now holds text beyond its hint: the name, start, duration...
    QVERIFY(count_dark(img, QRect(940, 40, 250, 180)) > 400);
  }

  void gpuDemo() {
    QTemporaryDir dir;
    QString png = dir.filePath("gpu.png");
    Run r = run_viewer(
        {"--screenshot", png, "--size", "1000x700", SHARDSCOPE_SOURCE_DIR "/tests/golden/gpu_demo/gpu_demo.json.gz"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QImage img(png);
    QCOMPARE(img.size(), QSize(1000, 700));
    // Zoomed out, this run's kernels are dense: mostly folded runs, drawn in the lighter shade of their colour.
    Rgb folded = QColor::fromRgb(QRgb(0xFF000000u | kCompute)).lighter(130).rgb() & 0xFFFFFF;
    QRect timeline(kLabelWidth, 40, 600, 400);
    QVERIFY(count_colour(img, timeline, kCompute) + count_colour(img, timeline, folded) > 50);
    QVERIFY(count_colour(img, timeline, kMemory) > 50);  // memory activity (copies, sets) in sky blue
  }

  void helpNeedsNoDisplay() {
    // --help from a shell with no display: the usage on stdout and exit 0 (QApplication would abort first).
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("DISPLAY");
    env.remove("WAYLAND_DISPLAY");
    env.insert("QT_QPA_PLATFORM", "xcb");  // a platform that needs a display
    p.setProcessEnvironment(env);
    p.start(SHARDSCOPE_VIEWER, {"--help"});
    QVERIFY(p.waitForFinished(60'000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 0);
    const QString out = QString::fromLocal8Bit(p.readAllStandardOutput());
    QVERIFY2(out.contains("Usage:") && out.contains("--screenshot") && out.contains("PATH"), qPrintable(out));
  }

  void badInputExitsTwoNamingTheFile() {
    QTemporaryDir dir;
    QString bad = test::write_malformed_trace(dir, "broken.json");
    QVERIFY(!bad.isEmpty());
    Run r = run_viewer({"--screenshot", dir.filePath("x.png"), bad});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("broken.json"), qPrintable(r.err));
    QVERIFY(!QFile::exists(dir.filePath("x.png")));
    Run missing = run_viewer({"--screenshot", dir.filePath("y.png"), dir.filePath("nowhere")});
    QCOMPARE(missing.code, 2);
    QVERIFY2(missing.err.contains("nowhere"), qPrintable(missing.err));
  }

  void maxTraceBytesRefusesAndRaises() {
    // cut.json is 30,000 bytes: refused under a 20,000-byte limit, naming the file and the flag that raises it,
    // and read under 1 MiB.
    QTemporaryDir dir;
    const QString cut = SHARDSCOPE_SOURCE_DIR "/tests/golden/truncated/cut.json";
    QCOMPARE(QFileInfo(cut).size(), qint64(30'000));
    Run small = run_viewer({"--max-trace-bytes", "20000", "--screenshot", dir.filePath("a.png"), cut});
    QCOMPARE(small.code, 2);
    QVERIFY2(small.err.contains("cut.json") && small.err.contains("over the limit of 20000 bytes") &&
                 small.err.contains("--max-trace-bytes"),
             qPrintable(small.err));
    QVERIFY(!QFile::exists(dir.filePath("a.png")));
    Run big = run_viewer({"--max-trace-bytes=1MiB", "--screenshot", dir.filePath("b.png"), cut});
    QVERIFY2(big.code == 0, qPrintable(big.err));
    QVERIFY(QFile::exists(dir.filePath("b.png")));
    // Just over and just under the file, with the suffixes the CLI takes.
    QCOMPARE(run_viewer({"--max-trace-bytes", "29KiB", "--screenshot", dir.filePath("c.png"), cut}).code, 2);
    QCOMPARE(run_viewer({"--max-trace-bytes", "30k", "--screenshot", dir.filePath("d.png"), cut}).code, 0);
    // Bad values: one line naming the flag and the value, exit 2, before anything is read. The GUI path too.
    for (const char* bad : {"0", "-5", "lots", "12Q", "1.5M", "", "99999999999999999999", "17179869184G"})
      for (bool gui : {false, true}) {
        QStringList args{QString("--max-trace-bytes=") + bad};
        if (!gui) args << "--screenshot" << dir.filePath("e.png");
        Run r = run_viewer(args << cut);
        QCOMPARE(r.code, 2);
        // Qt may add its own warnings (XDG_RUNTIME_DIR); the viewer says one line.
        const QStringList ours = r.err.split('\n').filter(QRegularExpression("^shardscope-viewer: "));
        QVERIFY2(
            ours.size() == 1 && ours[0].contains("--max-trace-bytes") && ours[0].endsWith(QString("got '%1'").arg(bad)),
            qPrintable(r.err));
      }
  }

  void truncatedRunOpens() {
    QTemporaryDir dir;
    QString png = dir.filePath("cut.png");
    Run r = run_viewer(
        {"--screenshot", png, "--size", "1000x700", SHARDSCOPE_SOURCE_DIR "/tests/golden/truncated/cut.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QImage img(png);
    // The banner's background (#FFF3CD) across the top of the central area.
    QVERIFY(count_colour(img, QRect(0, 20, 900, 60), 0xFFF3CD) > 2000);
  }
};

QTEST_GUILESS_MAIN(TestViewerScreenshot)
#include "tst_viewer_screenshot.moc"
