// PyTorch FSDP on Nsight input: under torch.autograd.profiler.emit_nvtx, FSDP's record_function labels
// ("FSDP::pre_forward (blocks.3)", "FullyShardedDataParallel.forward") are NVTX ranges on the thread that ran
// the hook, and ProfilerStep#N ranges mark the steps. The units, the unit-tagged all-gathers and the
// backward ranges the prefetch check reads come from the same code as on Kineto JSON (plugins/kineto/
// fsdp_labels.h), given the kernels' launching threads.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "model/trace.h"

namespace shardscope::nsys {

// Whether any name of the rank is an FSDP label (a cheap test before derive_units).
bool has_fsdp_labels(const model::Rank& rank);

// `calls`: (start, thread) of every CUDA call that launched GPU work, sorted. A finalized rank with FSDP labels
// gets its ProfilerStep steps (model::kDefaultStepPattern) and its units; one without is left as it is.
// Returns the number of units.
size_t derive_units(model::Rank& rank, const std::vector<std::pair<int64_t, int64_t>>& calls);

}  // namespace shardscope::nsys
