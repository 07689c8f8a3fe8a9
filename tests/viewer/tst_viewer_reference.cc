// The real window against reviewed pictures (tests/viewer/screenshot_cases.txt): `shardscope-viewer
// --screenshot` on each case, compared pixel by pixel with its reference with a tolerance, so that a change
// anyone would see (a colour, a row that moved, a dock that lost its table) fails, while antialiasing does
// not. The first reference is the README's picture, so the README shows what this test checked. A failing
// case leaves the picture it got and a mask of the differing pixels in $SHARDSCOPE_SCREENSHOT_OUT (default:
// the working directory's screenshots/) for review; scripts/update-screenshots redraws the references. A
// case's run may be generated ("generated:1024x120", run_path below).
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include "viewer/bench/generated_files.h"

namespace {

// A pixel differs when a channel is off by more than this; a case fails when more than kMaxShare of its
// pixels differ. Text antialiasing and subpixel placement move single channels by less than the first.
constexpr int kChannelTolerance = 40;
constexpr double kMaxShare = 0.005;

struct Case {
  QString reference, size, option, value, path;
};

QList<Case> read_cases() {
  QList<Case> cases;
  QFile f(SHARDSCOPE_SOURCE_DIR "/tests/viewer/screenshot_cases.txt");
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return cases;
  while (!f.atEnd()) {
    const QString line = QString::fromUtf8(f.readLine()).trimmed();
    if (line.isEmpty() || line.startsWith('#')) continue;
    const QStringList parts = line.split('|');
    if (parts.size() != 3) continue;
    const QString args = parts[2].trimmed();
    const qsizetype last = args.lastIndexOf(' '), first = args.indexOf(' ');
    if (first < 0 || last <= first) continue;
    cases.push_back({parts[0].trimmed(), parts[1].trimmed(), args.left(first), args.mid(first + 1, last - first - 1),
                     args.mid(last + 1)});
  }
  return cases;
}

// "generated:RANKSxEVENTS": RANKS generated ranks of EVENTS events each (viewer/bench/generated_files.h), written
// into `dir` first, as scripts/update-screenshots writes them; any other path is the repository's.
QString run_path(const QString& path, const QTemporaryDir& dir) {
  const auto m = QRegularExpression("^generated:(\\d+)x(\\d+)$").match(path);
  if (!m.hasMatch()) return path;
  const QString out = dir.filePath("generated");
  const int ranks = m.captured(1).toInt();
  shardscope::bench::write_generated_run(out.toStdString(), size_t(ranks) * m.captured(2).toULongLong(), ranks, false);
  return out;
}

struct Difference {
  qint64 pixels = 0;
  QImage mask;  // white where the pixels differ
};

Difference compare(const QImage& got, const QImage& want) {
  Difference d;
  d.mask = QImage(got.size(), QImage::Format_RGB32);
  d.mask.fill(Qt::black);
  for (int y = 0; y < got.height(); ++y)
    for (int x = 0; x < got.width(); ++x) {
      const QRgb a = got.pixel(x, y), b = want.pixel(x, y);
      const int off =
          std::max({std::abs(qRed(a) - qRed(b)), std::abs(qGreen(a) - qGreen(b)), std::abs(qBlue(a) - qBlue(b))});
      if (off > kChannelTolerance) {
        ++d.pixels;
        d.mask.setPixel(x, y, qRgb(255, 255, 255));
      }
    }
  return d;
}

}  // namespace

class TestViewerReference : public QObject {
  Q_OBJECT
 private slots:
  void matchesReviewedPictures_data() {
    QTest::addColumn<int>("index");
    const QList<Case> cases = read_cases();
    QVERIFY2(cases.size() >= 4, "tests/viewer/screenshot_cases.txt lists fewer cases than it did");
    for (int i = 0; i < cases.size(); ++i) QTest::newRow(qPrintable(cases[i].reference)) << i;
  }

  void matchesReviewedPictures() {
    QFETCH(int, index);
    const Case c = read_cases().at(index);
    QTemporaryDir dir;
    const QString png = dir.filePath("got.png");
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("XDG_CONFIG_HOME", dir.filePath("config"));  // no row arrangement saved by an earlier run
    env.insert("QT_QPA_PLATFORM", "offscreen");
    p.setProcessEnvironment(env);
    p.setWorkingDirectory(SHARDSCOPE_SOURCE_DIR);
    p.start(SHARDSCOPE_VIEWER, {"--screenshot", png, "--size", c.size, c.option, c.value, run_path(c.path, dir)});
    QVERIFY(p.waitForFinished(90'000));
    QVERIFY2(p.exitCode() == 0, qPrintable(QString::fromLocal8Bit(p.readAllStandardError())));
    const QString err = QString::fromLocal8Bit(p.readAllStandardError());
    QVERIFY2(!err.contains("no dock named") && !err.contains("no event named"), qPrintable(err));

    const QImage got = QImage(png).convertToFormat(QImage::Format_RGB32);
    const QImage want = QImage(SHARDSCOPE_SOURCE_DIR "/" + c.reference).convertToFormat(QImage::Format_RGB32);
    QVERIFY2(!want.isNull(), qPrintable("no reference picture " + c.reference));
    QCOMPARE(got.size(), want.size());
    const Difference d = compare(got, want);
    const double share = double(d.pixels) / (double(got.width()) * got.height());
    if (share > kMaxShare) {
      const QString out = qEnvironmentVariable("SHARDSCOPE_SCREENSHOT_OUT", QDir::current().filePath("screenshots"));
      QDir().mkpath(out);
      const QString stem = QFileInfo(c.reference).completeBaseName();
      got.save(out + "/" + stem + ".got.png");
      d.mask.save(out + "/" + stem + ".diff.png");
      QFAIL(qPrintable(QString("%1: %2 of %3 pixels (%4 %) differ from the reference by more than %5 a channel; "
                               "the picture and the mask are in %6 (scripts/update-screenshots redraws the references)")
                           .arg(c.reference)
                           .arg(d.pixels)
                           .arg(qint64(got.width()) * got.height())
                           .arg(100 * share, 0, 'f', 2)
                           .arg(kChannelTolerance)
                           .arg(out)));
    }
  }
};

QTEST_GUILESS_MAIN(TestViewerReference)
#include "tst_viewer_reference.moc"
