// A traced process for the SIGKILL test: emits one "tick" instant a millisecond, and after recording each
// one prints its sequence number, so the parent knows what was recorded before it kills us.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "tracer/tracer.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: trace_child OUT FLUSH_MS\n");
    return 2;
  }
  namespace tr = shardscope::tracer;
  tr::start(
      {.path = argv[1], .rank = 0, .world_size = 1, .flush_interval = std::chrono::milliseconds(std::atoi(argv[2]))});
  for (int64_t seq = 0;; ++seq) {
    tr::instant("tick", {{"seq", seq}});
    std::printf("%lld\n", static_cast<long long>(seq));
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}
