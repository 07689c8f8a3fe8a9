// libshardscope_inject.so: the CUDA driver loads the library named by CUDA_INJECTION64_PATH during cuInit
// and calls InitializeInjection, so an unmodified program (a PyTorch script) is traced:
//
//   CUDA_INJECTION64_PATH=/path/libshardscope_inject.so SHARDSCOPE_OUT=out/run torchrun ... train.py
//
// One file per process, $SHARDSCOPE_OUT/trace.rank<R>.pid<P>.json.gz, R from RANK (else LOCAL_RANK, else 0):
// torchrun sets RANK before the script's first CUDA call, and the pid keeps apart the other processes that
// inherit the variable (dataloader workers, compile subprocesses). Written every flush interval
// (SHARDSCOPE_FLUSH_MS, default 100), so os._exit or SIGKILL lose at most about one interval.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

#include "tracer/cupti/cupti_backend.h"
#include "tracer/cupti/device_check.h"

namespace {

namespace tr = shardscope::tracer;

void say(const std::string& line) { std::fprintf(stderr, "shardscope inject: %s\n", line.c_str()); }

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return end && *end == '\0' ? int(n) : fallback;
}

void initialize() {
  const char* out = std::getenv("SHARDSCOPE_OUT");
  if (!out || !*out) {
    say("SHARDSCOPE_OUT is not set (a directory for the trace files); nothing traced");
    return;
  }
  // The driver calls us from inside cuInit, so libcuda is loaded; if it is not, we were loaded some other
  // way (dlopen, a test) in a process without a driver, and there is nothing to trace.
  if (!shardscope::tracer::cupti::driver_loaded()) {
    say("no CUDA driver in this process; nothing traced");
    return;
  }
  int rank = env_int("RANK", env_int("LOCAL_RANK", 0));
  std::filesystem::path dir(out);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto path = dir / ("trace.rank" + std::to_string(rank) + ".pid" + std::to_string(getpid()) + ".json.gz");
  try {
    bool gpu = tr::cupti::start(
        {.path = path,
         .rank = rank,
         .world_size = env_int("WORLD_SIZE", 1),
         .flush_interval = std::chrono::milliseconds(env_int("SHARDSCOPE_FLUSH_MS", 100)),
         .run_config = {{"program", "injected"}},
         .process_name = "rank " + std::to_string(rank) + " (pid " + std::to_string(getpid()) + ")"},
        // Inside cuInit: no device check (it would re-enter the driver); the program's NVTX ranges are the
        // user's own, so the default domain is kept; no cuptiFinalize from an exit handler; the program
        // samples no memory of its own, so the device's used memory is sampled at its allocations.
        {.default_domain_markers = true,
         .check_device = false,
         .finalize_at_stop = false,
         .sample_device_memory = true});
    if (!gpu) {
      // Without CUPTI an unmodified program records nothing: leave no empty file behind.
      tr::stop();
      std::filesystem::remove(path, ec);
      return;
    }
    say("tracing into " + path.string());
  } catch (const std::exception& e) {
    say(std::string("cannot trace: ") + e.what());
  }
}

}  // namespace

// Non-zero: success, as the driver expects. Never fails the program's cuInit, whatever happens here.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;  // the driver may call it once per cuInit; we trace once per process
  std::call_once(once, initialize);
  return 1;
}
