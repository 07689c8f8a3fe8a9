// Recognizing NCCL's kernels and NVTX ranges, and naming the collective each stands for.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace shardscope::tracer::cupti {

// True for NCCL's kernels: "ncclDevKernel_*" (NCCL 2.19+), "ncclKernel_*" (2.8-2.18), demangled or not.
bool is_nccl_kernel(std::string_view name);

// The collective kind a kernel name says (keys::kAllGather, ...: "all_gather", "reduce_scatter",
// "all_reduce", "broadcast", "reduce", "send_recv", "all_to_all"), or "" when it does not say
// (ncclDevKernel_Generic carries any batch of collectives).
std::string nccl_kernel_collective(std::string_view name);

// The same for one of NCCL's NVTX range names ("ncclAllGather", "ncclSend", ...), or "" for the ranges
// that are not one collective (ncclGroupStart/End, ncclCommInitRank, ...).
std::string nccl_range_collective(std::string_view name);

// Trace args from the decoded extended payload of NCCL's range range_name ({entry name: value}, see
// nvtx_payload.h): keys::kArgNcclMessageBytes, kArgReduceOp, kArgNcclComm, kArgRoot, kArgPeer, and
// keys::kArgBytes where NCCL's message size means what the trainer's bytes mean (not for all_gather and
// reduce_scatter, where NCCL gives one rank's shard and the trainer the whole). {} when none are there.
nlohmann::json nccl_payload_args(const nlohmann::json& fields, std::string_view range_name);

// Folds the payload args of one more collective of a group (one kernel for all) into acc: byte counts add
// up when every collective has them; any other value stays only where all agree.
void merge_group_payload(nlohmann::json& acc, const nlohmann::json& next);

}  // namespace shardscope::tracer::cupti
