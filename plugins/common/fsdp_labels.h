// FSDP awareness for PyTorch traces. FSDP2 (fully_shard) labels name the module ("FSDP::all_gather
// (layers.3)"); FSDP1 (FullyShardedDataParallel) labels do not, so its units come from the order of its hooks
// (fsdp_units.h). From either, this tags each all-gather kernel with its unit and adds, on a derived track,
// the ranges the prefetch check reads: "unit_backward" (the device time of the kernels a unit's backward
// launched), a "backward" phase per backward pass, as the trainer records them itself, and a "rate_limited"
// instant where FSDP1's rate limiter held an all-gather back.
//
// A kernel is linked to a label through Kineto's correlation only: the kernel's args.correlation names the
// runtime call that launched it (cudaLaunchKernel, cuLaunchKernelEx, ...), and that call lies inside the
// label on the thread that made it. Nothing is matched by time across threads, and nothing derived crosses a
// ProfilerStep: every tagged or derived event carries the step (Event::step) of the hook it came from.
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace shardscope::plugins {

// A device event and the track (thread) of the runtime call that launched it, joined by correlation.
struct Launch {
  uint32_t event;  // index into the events given to derive_fsdp_units
  uint32_t track;
};

// `events` are the rank's events in file order, `track_of` their tracks (indices into rank.tracks); device
// events must already carry issued_ns (their launch) and rank.steps must be final. Appends derived events
// and, when any, their track. Returns the number of FSDP units found (0: no FSDP labels; nothing is
// changed). Inferred units are said so in rank.unit_identity.
size_t derive_fsdp_units(model::Rank& rank, std::vector<model::Event>& events, std::vector<uint32_t>& track_of,
                         const std::vector<Launch>& launches);

}  // namespace shardscope::plugins
