// Nsight Systems' CUDA memory records (`nsys profile --cuda-memory-usage=true`): one row per device memory
// allocation or free (CUDA_GPU_MEMORY_USAGE_EVENTS: start, globalPid, deviceId, address, bytes, memKind,
// memoryOperationType 0 allocation / 1 deallocation as ENUM_CUDA_DEV_MEM_EVENT_OPER says, correlationId of
// the CUDA call that made it), read as the allocator events the PyTorch profiler's [memory] events give
// (model::AllocatorEvent): in time order, each with the device's running total after it. These are CUDA's
// allocations: under PyTorch's caching allocator, the segments it reserves, not its tensors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "model/trace.h"
#include "plugins/nsys/nsys_export.h"
#include "plugins/nsys/process_rows.h"

namespace shardscope::nsys {

struct MemoryRecords {
  bool table = false;  // the export has the table
  size_t read = 0;     // the process's rows that became allocator events
  size_t host = 0;     // rows of host memory (pageable, pinned): not the GPU's, left out
  // Rows left out because they cannot be taken as they are.
  size_t bad_time = 0, negative = 0, odd_operation = 0, free_unseen = 0;
  size_t left_out() const { return bad_time + negative + odd_operation + free_unseen; }
};

// Appends the process `key`'s records to r.allocator. `track_of`: the host thread's track of the CUDA call
// with a correlationId (UINT32_MAX where none is known).
MemoryRecords read_memory(Export& x, ProcessScans& scans, int64_t key, model::Rank& r,
                          const std::function<uint32_t(int64_t)>& track_of);

// The one warning line for records left out ("" where none was).
std::string memory_warning(const std::string& source, const MemoryRecords& m);

}  // namespace shardscope::nsys
