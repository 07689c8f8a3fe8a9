// The "FSDP units" rows: one row per FSDP unit of a rank, in unit order, holding that unit's all-gathers,
// its forward and backward compute and its reduce-scatters (the events that carry the unit: Event::unit).
// The trace has no such track; Perfetto and Nsight users look for one to read a unit's life at a glance.
#pragma once

#include <string>
#include <vector>

#include "viewer/model/derived_rows.h"

namespace shardscope::viewer {

// Empty when no event of the rank names a unit (no group then, not an empty one). One pass over the rank's
// events. Each kind in one version, the device's where the rank has it, else the host's: collectives are
// the NCCL kernels on a GPU (their host ranges are Host class there), the host ranges on a CPU run or where
// no kernel was seen; compute is what the prefetch check reads, the device-time unit ranges the importers
// derive (cat "fsdp"), else the host unit_forward / unit_backward ranges.
std::vector<DerivedRow> fsdp_unit_rows(const model::Rank& rank);

// "unit 3 · block2": the number the trace gives and, when it names the units (the trainer's run_config
// units, the Kineto importer's fsdp_units), the name.
std::string unit_label(const model::Rank& rank, int unit);

}  // namespace shardscope::viewer
