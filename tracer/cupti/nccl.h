// NCCL's NVTX payloads decoded into trace args.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tracer/format/nccl_names.h"

namespace shardscope::tracer::cupti {

// The name rules live with the trace file's vocabulary (tracer/format/nccl_names.h), shared with the importers.
using trace::is_nccl_kernel;
using trace::nccl_kernel_collective;
using trace::nccl_range_collective;

// Trace args from the decoded extended payload of NCCL's range range_name ({entry name: value}, see
// nvtx_payload.h): keys::kArgNcclMessageBytes, kArgReduceOp, kArgNcclComm, kArgRoot, kArgPeer, and
// keys::kArgBytes where NCCL's message size means what the trainer's bytes mean (not for all_gather and
// reduce_scatter, where NCCL gives one rank's shard and the trainer the whole). {} when none are there.
nlohmann::json nccl_payload_args(const nlohmann::json& fields, std::string_view range_name);

// Folds the payload args of one more collective of a group (one kernel for all) into acc: byte counts add
// up when every collective has them; any other value stays only where all agree.
void merge_group_payload(nlohmann::json& acc, const nlohmann::json& next);

}  // namespace shardscope::tracer::cupti
