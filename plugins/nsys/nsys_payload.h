// NCCL's NVTX payloads (nccl src/include/nvtx_payload_schemas.h: communicator, message size, peer, ranks)
// as an export gives them: the JSON of each event (`jsonText`, exports made with JSON payloads). An export
// without them (the default: no blobs, no JSON) leaves bytes and peers unknown.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <utility>

namespace shardscope::nsys {

class Export;

struct NcclPayload {
  int64_t bytes = -1;  // "Message size [bytes]"
  int peer = -1;       // "Peer rank"
  int nranks = 0;      // "No. of ranks" (communicator init)
  int rank = -1;       // "Rank" (communicator init)
  bool any = false;
};

// The fields found anywhere in a JSON object (nested one level or more, as exports wrap them); nothing for
// text that is not JSON or nests deeper than 32 levels.
NcclPayload parse_payload(std::string_view json_text);

// Per process (globalTid >> 24): NCCL's (rank, ranks) in its largest communicator, where payloads say.
std::map<int64_t, std::pair<int, int>> nccl_ranks(Export& x);

}  // namespace shardscope::nsys
