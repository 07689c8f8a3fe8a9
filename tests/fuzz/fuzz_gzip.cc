// libFuzzer target: a file as the CLI loads it (plugins/load/read_text: libdeflate's one-pass inflate when
// the gzip trailer is plausible, zlib's streaming inflate otherwise), then the importer its head picks.
// The file is a memfd, so each input is a real regular file without touching the disk. A file the Kineto
// importer takes is read a second time through the loader's text window (read, or inflated, as it is parsed):
// a different outcome (error, events) is a finding.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "plugins/api/registry.h"
#include "plugins/common/text_window.h"
#include "plugins/load/read_text.h"
#include "tracer/format/error.h"
#include "tracer/format/limits.h"

namespace {
int g_fd = -1;
std::string g_path;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Small enough that a gzip bomb is refused quickly and never exhausts the fuzzer's memory.
  shardscope::trace::limits().max_text_bytes = 16 << 20;
  g_fd = memfd_create("fuzz_gzip", 0);
  g_path = "/proc/self/fd/" + std::to_string(g_fd);
  return 0;
}

// What reading the file with `imp` gave, through the window or whole.
std::string outcome(const shardscope::plugins::Importer& imp, bool window) {
  using namespace shardscope;
  try {
    plugins::FileText t = window ? plugins::read_text_window(g_path) : plugins::read_text(g_path);
    plugins::TextWindowScope scope(t.window);
    plugins::Input in{"fuzz.json.gz", t.data, t.size, std::move(t.owner), t.gzip, t.gzip_cut_at};
    model::Rank r = imp.read(std::move(in));
    std::string s = std::to_string(r.event_count()) + " events";
    for (const std::string& w : r.warnings) s += "; " + w;
    return s;
  } catch (const trace::TraceError& e) {
    return e.what();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardscope;
  if (ftruncate(g_fd, 0) != 0 || pwrite(g_fd, data, size, 0) != ssize_t(size)) return 0;
  static const plugins::Registry registry = plugins::Registry::with_builtins();
  try {
    plugins::FileText t = plugins::read_text(g_path);
    const plugins::Importer* imp = registry.find(t.text().substr(0, 64 * 1024));
    if (!imp) return 0;
    plugins::Input in{"fuzz.json.gz", t.data, t.size, std::move(t.owner), t.gzip, t.gzip_cut_at};
    (void)imp->read(std::move(in));
    if (imp->name() == "kineto" && outcome(*imp, false) != outcome(*imp, true)) abort();
  } catch (const shardscope::trace::TraceError&) {}
  return 0;
}
