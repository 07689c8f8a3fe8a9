// libFuzzer target: a small database as the Nsight Systems importer opens it (by path, read-only,
// immutable), every rank read. SQLite refuses a damaged page with an error, never a crash; the importer
// must turn that, and any table or column that is absent or holds the wrong type, into a TraceError.
// Nothing may be created beside the file (a WAL-mode input got -wal and -shm files): one there aborts.
// Each input is written to a file of this process's own in /dev/shm (memory, not disk): SQLite resolves a
// /proc/self/fd link to the memfd's name, which it cannot open, so a memfd will not do here.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "plugins/nsys/nsys_importer.h"
#include "tracer/format/error.h"

namespace {
int g_fd = -1;
std::string g_path;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_path = "/dev/shm/shardscope_fuzz_nsys_" + std::to_string(getpid()) + ".sqlite";
  g_fd = open(g_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  std::atexit([] {
    for (const char* s : {"", "-wal", "-shm", "-journal"}) unlink((g_path + s).c_str());
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardscope;
  if (ftruncate(g_fd, 0) != 0 || pwrite(g_fd, data, size, 0) != ssize_t(size)) return 0;
  static const plugins::NsysImporter importer;
  try {
    plugins::Input in;
    in.path = "fuzz.sqlite";
    in.file = g_path;
    importer.read_ranks(std::move(in), false, [](model::Rank&& r, model::EventArgs&&) { (void)r.event_count(); });
  } catch (const trace::TraceError&) {}
  for (const char* beside : {"-wal", "-shm", "-journal"})
    if (access((g_path + beside).c_str(), F_OK) == 0) std::abort();
  return 0;
}
