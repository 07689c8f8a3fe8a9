// shardscope-viewer [PATH...]: the desktop timeline. With --screenshot it loads synchronously, renders the
// window into a PNG and exits (2 when nothing loaded), which is how the tests and the demo look at it.
// --help prints the usage and exits 0 without a display. --select and --area stand for a click and a
// Shift+drag across rows, through the same code, so a picture shows what the hand would get.
#include <QApplication>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QPixmap>
#include <QRegularExpression>

#include <cstdio>
#include <cstring>
#include <optional>

#include "tracer/format/limits.h"

#include "viewer/app/docks/area_dock.h"
#include "viewer/app/live_follow.h"
#include "viewer/app/main_window.h"
#include "viewer/app/timeline_widget.h"
#include "viewer/model/area_slices.h"
#include "viewer/model/open_filter.h"

namespace {

struct Options {
  QCommandLineOption screenshot{"screenshot", "Render the window into FILE.png and exit.", "FILE"};
  QCommandLineOption size{"size", "Window size for --screenshot (default 1400x900).", "WxH", "1400x900"};
  QCommandLineOption select{
      "select", "Select the first event named NAME as a click does (a collective: across ranks too).", "NAME"};
  QCommandLineOption follow{
      "follow", "A running job's trace folder: open it and take in each step as every rank finishes it.", "DIR"};
  QCommandLineOption area{"area",
                          "With --screenshot: select START:END (from the run's start, with units: 120ms:180ms) or "
                          "step:N over every row, as a Shift+drag across them does; raise the Area dock and print "
                          "its table.",
                          "START:END|step:N"};
  QCommandLineOption raise{"raise", "Bring the dock titled NAME to the front (Prefetch, Steps, Memory, Legend, ...).",
                           "NAME"};
  QCommandLineOption max_trace_bytes{"max-trace-bytes",
                                     "Refuse a trace whose JSON text (inflated) is larger than N, e.g. 16GiB (default: "
                                     "4 GiB or an eighth of the memory this process may use, whichever is less).",
                                     "N"};
};

void describe(QCommandLineParser& parser, const Options& o) {
  parser.setApplicationDescription("Timeline of a sharded data-parallel run (a run directory or trace files)");
  parser.addHelpOption();
  parser.addPositionalArgument(
      "paths",
      QString::fromStdString("Run directories or trace files: " +
                             shardscope::plugins::formats_text(shardscope::viewer::viewer_formats().formats())),
      "[PATH...]");
  parser.addOptions({o.screenshot, o.size, o.select, o.area, o.raise, o.follow, o.max_trace_bytes});
}

bool wants_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    for (const char* h : {"--help", "-h", "-?", "--help-all"})
      if (std::strcmp(argv[i], h) == 0) return true;
  return false;
}

// --area after the run is open: the area over every row, the Area dock raised, and its table on stdout as
// Ctrl+C copies it (so a script can read what the picture shows). False, said on stderr, when the range
// misses the run.
bool selectArea(shardscope::viewer::MainWindow& window, const shardscope::viewer::AreaSpan& span, const QString& text) {
  const shardscope::viewer::TimelineLayout* layout = window.selection()->layout();
  if (!layout) {  // rank summaries: a row per rank, no slices
    std::fprintf(stderr, "shardscope-viewer: --area needs trace files; rank summaries hold no slices\n");
    return false;
  }
  const int64_t start = layout->start_ns();
  if (span.step) {
    const auto w = shardscope::viewer::step_window(*layout, *span.step);
    if (!w || w->second <= w->first) {
      std::fprintf(stderr, "shardscope-viewer: --area '%s': no rank has step %lld (the Steps dock lists them)\n",
                   qPrintable(text), static_cast<long long>(*span.step));
      return false;
    }
    return selectArea(window, {w->first - start, w->second - start, std::nullopt}, text);
  }
  if (span.lo_ns >= layout->end_ns() - start) {
    std::fprintf(stderr, "shardscope-viewer: --area '%s' starts after the run's end (%.6g ms from its start)\n",
                 qPrintable(text), double(layout->end_ns() - start) / 1e6);
    return false;
  }
  if (!window.timeline()->selectAreaOverAllRows(start + span.lo_ns, start + span.hi_ns)) {
    std::fprintf(stderr, "shardscope-viewer: --area: the timeline shows no rows to select\n");
    return false;
  }
  auto* dock = window.findChild<shardscope::viewer::AreaDock*>();
  if (!dock) return false;
  dock->raise();
  std::fputs(qPrintable(dock->copyText()), stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (wants_help(argc, argv)) {
    // QApplication aborts when no display can be opened; the usage needs none.
    QCoreApplication core(argc, argv);
    QCoreApplication::setApplicationName("shardscope-viewer");
    QCommandLineParser parser;
    describe(parser, o);
    parser.showHelp(0);  // exits
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName("shardscope-viewer");
  QCommandLineParser parser;
  describe(parser, o);
  parser.process(app);
  const QCommandLineOption &screenshot = o.screenshot, &size = o.size, &select = o.select, &raise = o.raise;
  if (parser.isSet(o.max_trace_bytes)) {
    // Process-wide, so the loader's worker thread reads under it too.
    std::optional<uint64_t> limit = shardscope::trace::parse_bytes(parser.value(o.max_trace_bytes).toStdString());
    if (!limit) {
      std::fprintf(stderr, "shardscope-viewer: --max-trace-bytes wants a size above 0 (4096, 64MiB, 16GiB), got '%s'\n",
                   qPrintable(parser.value(o.max_trace_bytes)));
      return 2;
    }
    shardscope::trace::limits().max_text_bytes = *limit;
  }

  shardscope::viewer::MainWindow window;
  const QStringList paths = parser.positionalArguments();
  if (!parser.isSet(screenshot) && parser.isSet(o.area)) {
    std::fprintf(stderr, "shardscope-viewer: --area needs --screenshot (in the window: Shift+drag across rows)\n");
    return 2;
  }
  if (!parser.isSet(screenshot)) {
    window.resize(1400, 900);
    window.show();
    if (parser.isSet(o.follow)) new shardscope::viewer::LiveFollow(&window, parser.value(o.follow));
    else if (!paths.isEmpty())
      window.openAsync(paths);
    return app.exec();
  }

  auto m = QRegularExpression("^(\\d+)x(\\d+)$").match(parser.value(size));
  if (!m.hasMatch()) {
    std::fprintf(stderr, "shardscope-viewer: --size wants WxH, got %s\n", qPrintable(parser.value(size)));
    return 2;
  }
  std::optional<shardscope::viewer::AreaSpan> area;
  if (parser.isSet(o.area)) {
    std::string why;
    area = shardscope::viewer::parse_area_span(parser.value(o.area).toStdString(), &why);
    if (!area) {
      std::fprintf(stderr, "shardscope-viewer: %s\n", why.c_str());
      return 2;
    }
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
  if (area && !selectArea(window, *area, parser.value(o.area))) return 2;
  if (parser.isSet(raise)) {
    if (auto* dock = window.findChild<QDockWidget*>(parser.value(raise))) dock->raise();
    else
      std::fprintf(stderr, "shardscope-viewer: no dock named %s\n", qPrintable(parser.value(raise)));
  }
  QApplication::processEvents();
  if (!window.grab().save(parser.value(screenshot), "PNG")) {
    std::fprintf(stderr, "shardscope-viewer: cannot write %s\n", qPrintable(parser.value(screenshot)));
    return 2;
  }
  return 0;
}
