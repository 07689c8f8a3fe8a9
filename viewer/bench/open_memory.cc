// What opening a run costs the viewer in memory: writes a generated run (the mix of generated_run.h: host
// ranges three deep, two kernels a group, a collective every 16th group) as trace files, in the project's own
// format or as Kineto JSON, then opens them as the window does (analyse_run with args, then the timeline's
// side tables) and prints the resident memory it added per event, beside the model's own accounting.
//
//   viewer_open_memory write DIR --events N [--ranks R] [--format shardscope|kineto]
//   viewer_open_memory open DIR...
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/analysis/run.h"
#include "viewer/bench/generated_files.h"
#include "viewer/model/run_memory.h"
#include "viewer/model/timeline_layout.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

size_t rss_bytes() {
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return size_t(resident) * size_t(sysconf(_SC_PAGESIZE));
}

size_t peak_rss_bytes() {
  size_t kb = 0;
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::strncmp(line, "VmHWM:", 6) == 0) kb = std::strtoull(line + 6, nullptr, 10);
    std::fclose(f);
  }
  return kb * 1024;
}

int usage() {
  std::fprintf(stderr,
               "usage: viewer_open_memory write DIR --events N [--ranks R] [--format shardscope|kineto]\n       "
               "viewer_open_memory open PATH...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string cmd = argv[1];
  if (cmd == "write") {
    size_t events = 10'000'000;
    int ranks = 8;
    bool kineto = false;
    for (int i = 3; i + 1 < argc; i += 2) {
      const std::string k = argv[i];
      if (k == "--events") events = std::strtoull(argv[i + 1], nullptr, 10);
      else if (k == "--ranks")
        ranks = std::atoi(argv[i + 1]);
      else if (k == "--format")
        kineto = std::string(argv[i + 1]) == "kineto";
      else
        return usage();
    }
    if (ranks < 1) return usage();
    bench::write_generated_run(argv[2], events, ranks, kineto);
    return 0;
  }
  if (cmd != "open") return usage();
  std::vector<std::string> paths(argv + 2, argv + argc);
  const size_t before = rss_bytes();
  const auto t0 = std::chrono::steady_clock::now();
  plugins::LoadOptions options;  // as the viewer's loader asks (viewer/app/loader.cc)
  options.keep_going = true;
  options.keep_args = true;
  analysis::AnalysedRun run = analysis::analyse_run(paths, options);
  viewer::TimelineLayout layout(run.trace);
  const size_t untrimmed = rss_bytes();  // what the window held before it handed free pages back
  viewer::release_free_memory();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t after = rss_bytes();
  const viewer::RunMemory m = viewer::run_memory(run, layout);
  const double ev = double(m.events);
  std::printf("events %zu, open %.2f s, RSS added %.1f MB = %.1f B/event, peak RSS %.1f MB\n", m.events, secs,
              double(after - before) / 1e6, double(after - before) / ev, double(peak_rss_bytes()) / 1e6);
  std::printf("before release_free_memory: RSS added %.1f MB = %.1f B/event\n", double(untrimmed - before) / 1e6,
              double(untrimmed - before) / ev);
  std::printf(
      "accounted %.1f B/event: events %.1f, strings %.1f, args %.1f, counters and steps %.1f, side tables %.1f\n",
      double(m.total()) / ev, double(m.event_bytes) / ev, double(m.string_bytes) / ev, double(m.args_bytes) / ev,
      double(m.other_bytes) / ev, double(m.side_bytes) / ev);
  return 0;
}
