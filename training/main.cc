// shardscope-train: a decoder-only transformer trained with FSDP/ZeRO sharding on libtorch, every
// all-gather, reduce-scatter and prefetch traced. Ranks meet by the torchrun environment variables.
// Flags → plan → run: training/app/flags.h settles the flags, training/app/run.h runs the rank.
#include <cstdio>
#include <exception>

#include "training/app/flags.h"
#include "training/app/run.h"
#include "training/app/stop.h"

using namespace shardscope::train;

int main(int argc, char** argv) {
  // Step lines go out as they are printed, on a pipe too: a launcher shows progress, and a rank stopped
  // mid-run has lost none of them.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Args a;
  if (auto code = parse_flags(argc, argv, a)) return *code;
  Plan p;
  try {
    p = make_plan(a);
  } catch (const std::exception& e) {
    fail(2, "", e.what());
  }
  run(a, p);
}
