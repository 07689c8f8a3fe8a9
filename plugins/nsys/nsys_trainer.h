// shardscope-train's own ranges on Nsight input. Built with CUDA, the trainer's tracer scopes are NVTX ranges
// (tracer/host/nvtx.h) with its first integer argument as the payload (NVTX_EVENTS.int64Value): "step" (the
// step number), "forward" / "backward" / "optimizer", "unit_forward" / "unit_backward" (the unit) on the
// compute thread, and "all_gather" / "reduce_scatter" / "all_reduce" (the unit) around each NCCL call on the
// comm threads. They get the categories and units the trainer's own file gives them, and the same join to
// the device work they launched (plugins/common/gpu_join.h), so units, steps and the prefetch check
// read an Nsight report of the trainer as they read its trace file.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "model/trace.h"
#include "plugins/common/gpu_join.h"

namespace shardscope::nsys {

// Whether a default-domain NVTX range of this name is one of the trainer's.
bool is_trainer_range(std::string_view name);

struct TrainerRange {
  uint32_t track = 0, index = 0;  // the NVTX range in r.tracks (before finalize() reorders them)
  int64_t payload = 0;            // int64Value; model::kUnknown when the export has none
};

struct TrainerInput {
  std::vector<TrainerRange> ranges;
  std::vector<plugins::gpu_join::ApiCall> api;        // every CUDA call with a correlationId, on its thread's track
  std::vector<plugins::gpu_join::DeviceWork> device;  // every device event with a correlationId
  std::vector<std::pair<int64_t, uint32_t>> threads;  // (OS thread, track) of every host thread
};

struct TrainerStats {
  size_t steps = 0, unit_ranges = 0, joined = 0;
  size_t without_payload = 0;  // ranges that needed a unit or step number and had none
};

// Needs a compute range ("unit_forward" / "unit_backward") among the ranges, else leaves the rank alone and
// returns zeros. Run before finalize(); consumes `in`.
TrainerStats apply_trainer(model::Rank& r, TrainerInput& in);

}  // namespace shardscope::nsys
