// shardscope-viewer [PATH...]: the desktop timeline. With --screenshot it loads synchronously, renders the
// window into a PNG and exits (2 when nothing loaded), which is how the tests and the demo look at it.
#include <QApplication>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QPixmap>
#include <QRegularExpression>

#include <cstdio>

#include "viewer/app/main_window.h"
#include "viewer/app/timeline_widget.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("shardscope-viewer");
  QCommandLineParser parser;
  parser.setApplicationDescription("Timeline of a sharded data-parallel run (a run directory or trace files)");
  parser.addHelpOption();
  parser.addPositionalArgument("paths", "Run directories or trace files (.json, .json.gz)", "[PATH...]");
  QCommandLineOption screenshot("screenshot", "Render the window into FILE.png and exit.", "FILE");
  QCommandLineOption size("size", "Window size for --screenshot (default 1400x900).", "WxH", "1400x900");
  QCommandLineOption select("select", "Select the first event named NAME and zoom to it.", "NAME");
  QCommandLineOption raise("raise", "Bring the dock titled NAME to the front (Prefetch, Steps, Memory, ...).", "NAME");
  parser.addOptions({screenshot, size, select, raise});
  parser.process(app);

  shardscope::viewer::MainWindow window;
  const QStringList paths = parser.positionalArguments();
  if (!parser.isSet(screenshot)) {
    window.resize(1400, 900);
    window.show();
    if (!paths.isEmpty()) window.openAsync(paths);
    return app.exec();
  }

  auto m = QRegularExpression("^(\\d+)x(\\d+)$").match(parser.value(size));
  if (!m.hasMatch()) {
    std::fprintf(stderr, "shardscope-viewer: --size wants WxH, got %s\n", qPrintable(parser.value(size)));
    return 2;
  }
  if (paths.isEmpty()) {
    std::fprintf(stderr, "shardscope-viewer: --screenshot needs a run directory or trace files\n");
    return 2;
  }
  window.resize(m.captured(1).toInt(), m.captured(2).toInt());
  window.show();
  QApplication::processEvents();
  QStringList failures;
  QString error = window.openSync(paths, &failures);
  if (!error.isEmpty()) {
    std::fprintf(stderr, "shardscope-viewer: %s\n", qPrintable(error));
    return 2;
  }
  for (const QString& f : failures) std::fprintf(stderr, "shardscope-viewer: not loaded: %s\n", qPrintable(f));
  if (parser.isSet(select) && !window.selectByName(parser.value(select)))
    std::fprintf(stderr, "shardscope-viewer: no event named %s\n", qPrintable(parser.value(select)));
  if (parser.isSet(raise)) {
    if (auto* dock = window.findChild<QDockWidget*>(parser.value(raise))) dock->raise();
    else std::fprintf(stderr, "shardscope-viewer: no dock named %s\n", qPrintable(parser.value(raise)));
  }
  QApplication::processEvents();
  if (!window.grab().save(parser.value(screenshot), "PNG")) {
    std::fprintf(stderr, "shardscope-viewer: cannot write %s\n", qPrintable(parser.value(screenshot)));
    return 2;
  }
  return 0;
}
