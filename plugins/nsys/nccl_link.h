// NCCL kernels and the NVTX ranges NCCL pushed around their launch (domain "NCCL": ncclAllReduce, ncclSend,
// ncclRecv, ncclGroupStart/End): which collective, and the bytes and ranks where the ranges' payloads say.
// A kernel launched inside ncclGroupEnd belongs to the calls since the matching ncclGroupStart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/event.h"

namespace shardscope::nsys {

struct NcclRange {
  int64_t tid = 0;
  int64_t start = 0, end = 0;
  std::string name;  // "ncclAllReduce"
  int64_t bytes = -1;
  int nranks = 0;
  int peer = -1;                 // ncclSend / ncclRecv: the other rank, where the payload says
  std::optional<uint64_t> comm;  // the communicator (commHash), where the payload says
};

struct NcclLaunch {
  model::Event* kernel;          // valid until the rank's tracks change
  int64_t tid;                   // the launching thread
  int64_t at;                    // the launch call's start
  int peer = -1;                 // out: the peer of a send/recv kernel whose calls all name the same one
  std::optional<uint64_t> comm;  // out: the communicator its calls name (all the same one)
  bool all_to_all = false;       // out: launched inside PyTorch's "nccl:all_to_all" range
};

// Fills each kernel's collective, bytes and group size from the ranges on its launching thread, where the
// kernel's own name does not say the kind; each send/recv launch its peer, each launch its communicator, and
// whether PyTorch's ProcessGroupNCCL range around it says all-to-all ("nccl:all_to_all", "nccl:alltoall"):
// NCCL runs one as grouped sends and receives, so its kernels are named SendRecv. Returns how many kernels a
// range described.
size_t link_nccl(std::vector<NcclRange>& ranges, std::vector<NcclLaunch>& launches);

}  // namespace shardscope::nsys
