// A user's program: traces a few steps with the installed tracer into a gzip trace file, then reads the file
// back with the installed reader. usage: consumer OUT.json.gz
#include <cstdio>
#include <string>

#include "tracer/format/reader.h"
#include "tracer/tracer.h"

namespace tr = shardscope::tracer;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer OUT.json.gz\n");
    return 2;
  }
  constexpr int kSteps = 3;
  tr::start({.path = argv[1], .rank = 0, .world_size = 1, .run_config = {{"program", "consumer"}}});
  for (int step = 0; step < kSteps; ++step) {
    tr::Range s(tr::intern("step " + std::to_string(step)));
    { tr::Range f("consumer.forward", {{"step", int64_t(step)}}); }
    tr::counter("consumer.bytes", int64_t(1024 * (step + 1)));
  }
  tr::stop();

  auto file = shardscope::trace::read_trace(argv[1]);
  int forwards = 0;
  for (const auto& e : file.events) forwards += e.name == "consumer.forward" && e.ph == 'X';
  std::printf("consumer: %zu events, %d consumer.forward ranges, gzip %d\n", file.events.size(), forwards,
              int(file.gzip));
  return forwards == kSteps && file.gzip ? 0 : 1;
}
