// On a GPU trace of the trainer, joins its host ranges to the device work they launched, by identity:
// - a host collective (cat comm on a comm thread) to its NCCL kernel(s): first by the kernel's external_id
//   (the trainer pushes the collective's issued_ns as CUPTI external correlation around its NCCL call),
//   else by the launch calls CUPTI recorded on the same OS thread inside the host range and their
//   correlation ids. The kernel then carries the host's unit, bytes, group size and issue time.
// - a unit's forward/backward compute range to the kernels launched for it inside it: by the compute thread
//   itself, or (a CUDA backward runs on libtorch's autograd device thread while the compute thread waits)
//   by a thread the trainer does not trace, onto the compute thread's own streams. Their device span
//   becomes a derived unit_forward/unit_backward event (cat fsdp) on its own track.
// Nothing is matched by time alone: a launch belongs to a host range only when it ran on a thread that acts
// for it, inside it, and the device work names that launch by correlation id (or external id).
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace shardscope::plugins::gpu_join {

// An event of the rank being built: r.tracks[track].events[index] (before finalize() reorders them).
struct Ref {
  uint32_t track = 0;
  uint32_t index = 0;
};

struct ApiCall {  // a CUDA runtime/driver call on a "CUDA API thread <tid>" track
  uint32_t track;
  int64_t ts;
  int64_t correlation;
};

struct DeviceWork {  // a kernel, copy, set or sync on a GPU stream
  Ref at;
  int64_t correlation;
  int64_t external_id;    // model::kUnknown when absent or of another kind than the trainer's
  int64_t message_bytes;  // NCCL's per-rank message size, model::kUnknown when absent
};

struct Input {
  std::vector<ApiCall> api;
  std::vector<DeviceWork> device;
  std::vector<Ref> comm;                             // the trainer's host collectives
  std::vector<Ref> compute;                          // the trainer's unit_forward / unit_backward host ranges
  std::vector<std::pair<int64_t, int64_t>> os_tids;  // (track tid, OS thread id) from thread_name metadata
  // (OS thread id, track) of CUDA API tracks that keys::kCudaApiTrack does not name: on Nsight input a
  // thread's calls and its ranges share one track (plugins/nsys/nsys_trainer.h).
  std::vector<std::pair<int64_t, uint32_t>> api_tracks;
};

struct Stats {
  size_t by_external_id = 0;  // device events joined through external_id
  size_t by_thread = 0;       // through the launching thread and correlation id
  size_t unit_ranges = 0;     // derived device-time unit ranges
};

// Needs the tracks' names (to find each OS thread's CUDA API track); run before steps are assigned, as
// the joined kernels' issued_ns changes to the host's. Consumes `in`.
Stats join(model::Rank& r, Input& in);

}  // namespace shardscope::plugins::gpu_join
