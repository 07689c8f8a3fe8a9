// A program that asks for GPU tracing (tracer::cupti::start), records host ranges and exits: the no-GPU path.
#include <cstdio>

#include "tracer/cupti/cupti_backend.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  namespace tr = shardscope::tracer;
  bool gpu = tr::cupti::start({.path = argv[1], .rank = 1, .world_size = 2});
  for (int i = 0; i < 10; ++i) tr::Range r("host step", {{"step", i}});
  tr::stop();
  std::printf("gpu=%d\n", gpu ? 1 : 0);
  return 0;
}
