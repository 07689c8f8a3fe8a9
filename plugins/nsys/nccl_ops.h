// NCCL's composite table of newer Nsight Systems releases: one row per NCCL operation with the communicator
// (commHash) and its place in that communicator's sequence (seqNumber), the instance every rank of the
// communicator shares. Its exact table name is not documented where we could check, so it is found by its
// columns: the first table (by name) that has both commHash and seqNumber. A row names its kernel by
// correlationId (the launch's) and may say the operation (operationId: text, or a StringIds id, "AllReduce"
// or "ncclAllReduce") and the message size (messageSize or bytes). Names assumed: nsys_keys.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/trace.h"
#include "plugins/nsys/nsys_export.h"
#include "plugins/nsys/process_rows.h"
#include "plugins/common/gpu_join.h"

namespace shardscope::nsys {

// The table's name, or empty.
std::string nccl_ops_table(Db& db);

struct NcclOpsResult {
  std::string table;  // empty: none in this export
  size_t rows = 0, linked = 0;
  std::vector<std::string> missing;  // columns looked for and not found
  struct Comm {
    uint32_t track, index;
    uint64_t comm;
  };
  std::vector<Comm> comms;  // each linked kernel's communicator (commHash), for its size (nccl_comms.h)
};

// Gives each NCCL kernel of `launched` (device events with their correlationId) its operation's communicator
// and sequence number (Event::group, Event::seq), kind and bytes. The table's rows of the process `key`
// (by globalPid or globalTid) through `scans`.
NcclOpsResult read_nccl_ops(Export& x, ProcessScans& scans, int64_t key, model::Rank& r,
                            const std::vector<plugins::gpu_join::DeviceWork>& launched);

}  // namespace shardscope::nsys
