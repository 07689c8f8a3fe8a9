// One process of an Nsight Systems export as one rank: GPU work on "GPU d stream s" tracks, CUDA calls and
// NVTX ranges on their threads, kernels linked to their launch by correlationId, NCCL kernels described by
// NCCL's NVTX ranges. Holds the process's rows only, so ranks are built one at a time; `scans` reads each
// table once for all of them (process_rows.h).
#pragma once

#include <string>

#include "model/trace.h"
#include "plugins/nsys/nsys_export.h"
#include "plugins/nsys/process_rows.h"

namespace shardscope::nsys {

// `scans`: the export's tables, read for its processes in turn (made with all = true where the file has this
// one process: rows of no process id count as its own). `file_warnings`: say what the export lacks (once a
// file, with its first rank). `args`: where to keep event args (a send/recv kernel's "peer"), or null.
model::Rank read_rank(Export& x, ProcessScans& scans, const Process& p, bool file_warnings,
                      model::EventArgs* args = nullptr);

// A PyTorch emit_nvtx range name without what it appends to the op or label ("aten::mm, seq = 3, op_id = 7,
// sizes = [...]" -> "aten::mm"), so ranges read as their profiler (Kineto) counterparts do.
std::string_view base_nvtx_name(std::string_view text);

}  // namespace shardscope::nsys
