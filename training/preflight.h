// What a run is refused for before anything is allocated: a shape whose counts leave int64, and on the host,
// ranks that cannot fit in the memory available. The estimate is the report's (sizing's ZeRO and activation
// models), fed from counts computed in checked arithmetic rather than from the unit table, which an absurd
// --layers would exhaust memory just building. No libtorch here.
#pragma once

#include <cstdint>
#include <string>

#include "sizing/presets.h"

namespace shardscope::train {

struct RunShape {
  sizing::ModelConfig model;  // validated (sizing::validate)
  int64_t batch = 1;          // sequences per rank per step
  int64_t shard_size = 1;     // ranks a unit is sharded over
  int stage = 3;              // ZeRO stage of the sharding strategy
  std::string param_dtype = "fp32";
  bool offload = false, prefetching = false, forward_prefetch = false, checkpointing = false;
};

// Throws std::invalid_argument, one line naming the flags and the numbers: when a parameter or activation
// count overflows int64, or when `host` (states on this machine) and `ranks_here` ranks need more than
// `available` bytes (0: unknown, not checked).
void check_run_fits(const RunShape& r, bool host, double available, int ranks_here);

}  // namespace shardscope::train
