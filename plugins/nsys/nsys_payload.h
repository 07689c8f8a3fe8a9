// NCCL's NVTX payloads (nccl src/include/nvtx_payload_schemas.h: communicator, message size, peer, ranks)
// as an export gives them: the JSON of each event (`jsonText`, exports made with JSON payloads). An export
// without them (the default: no blobs, no JSON) leaves bytes and peers unknown.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace shardscope::nsys {

struct NcclPayload {
  int64_t bytes = -1;            // "Message size [bytes]"
  int peer = -1;                 // "Peer rank"
  int nranks = 0;                // "No. of ranks" (communicator init)
  int rank = -1;                 // "Rank" (communicator init)
  std::optional<uint64_t> comm;  // "NCCL communicator ID" (commHash; NCCL >= 2.25)
  bool any = false;
};

// The fields found anywhere in a JSON object (nested one level or more, as exports wrap them); nothing for
// text that is not JSON or nests deeper than 32 levels.
NcclPayload parse_payload(std::string_view json_text);

}  // namespace shardscope::nsys
