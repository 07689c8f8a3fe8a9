#include "tracer/cupti/nccl.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <utility>

#include "tracer/format/keys.h"

namespace shardscope::tracer::cupti {
namespace {

// NCCL's payload entry names (src/include/nvtx_payload_schemas.h; "Bytes" before NCCL 2.25).
constexpr std::pair<std::string_view, const char*> kPayloadFields[] = {
    {"Message size [bytes]", keys::kArgNcclMessageBytes},
    {"Bytes", keys::kArgNcclMessageBytes},
    {"Reduction operation", keys::kArgReduceOp},
    {"NCCL communicator ID", keys::kArgNcclComm},
    {"Root", keys::kArgRoot},
    {"Peer rank", keys::kArgPeer},
};

}  // namespace

nlohmann::json nccl_payload_args(const nlohmann::json& fields, std::string_view range_name) {
  nlohmann::json args = nlohmann::json::object();
  if (!fields.is_object()) return args;
  for (const auto& [name, key] : kPayloadFields) {
    auto it = fields.find(name);
    if (it == fields.end()) continue;
    if (std::string_view(key) == keys::kArgNcclComm && it->is_number_unsigned()) {
      // A 64-bit hash: as hex text it stays exact in viewers that read JSON numbers as doubles.
      char hex[19];
      std::snprintf(hex, sizeof hex, "0x%016" PRIx64, it->get<uint64_t>());
      args[key] = hex;
    } else {
      args[key] = *it;
    }
  }
  std::string kind = nccl_range_collective(range_name);
  if (args.contains(keys::kArgNcclMessageBytes) &&
      (kind == keys::kAllReduce || kind == "broadcast" || kind == "reduce" || kind == "send_recv"))
    args[keys::kArgBytes] = args[keys::kArgNcclMessageBytes];
  return args;
}

void merge_group_payload(nlohmann::json& acc, const nlohmann::json& next) {
  for (auto it = acc.begin(); it != acc.end();) {
    auto n = next.find(it.key());
    bool count = it.key() == keys::kArgNcclMessageBytes || it.key() == keys::kArgBytes;
    if (n != next.end() && count && n->is_number_unsigned() && it->is_number_unsigned()) {
      *it = it->get<uint64_t>() + n->get<uint64_t>();
      ++it;
    } else if (n != next.end() && !count && *n == *it) {
      ++it;
    } else {
      it = acc.erase(it);
    }
  }
}

}  // namespace shardscope::tracer::cupti
