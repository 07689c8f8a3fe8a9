// FSDP awareness for PyTorch traces: FSDP2 (fully_shard) wraps its work in record_function labels that name
// the module, "FSDP::all_gather (layers.3)", "FSDP::pre_backward (layers.3)", "FSDP::post_backward_reduce
// (layers.3)". From them this tags each all-gather kernel with its unit and adds, on a derived track, the
// ranges the prefetch check reads: "unit_backward" (the device time of the kernels a unit's backward
// launched) and a "backward" phase per backward pass, as the trainer records them itself.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/model/trace.h"

namespace shardscope::plugins {

// `events` are the rank's events in file order, `track_of` their tracks (indices into rank.tracks); device
// events must already carry issued_ns (their launch). Appends derived events and, when any, their track.
// Returns the number of FSDP units found (0: no FSDP2 labels; nothing is changed).
size_t derive_fsdp_units(model::Rank& rank, std::vector<model::Event>& events, std::vector<uint32_t>& track_of);

}  // namespace shardscope::plugins
