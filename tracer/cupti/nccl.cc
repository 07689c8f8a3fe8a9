#include "tracer/cupti/nccl.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <utility>

#include "tracer/format/keys.h"

namespace shardscope::tracer::cupti {
namespace {

// The part of a (possibly mangled) name that starts at the NCCL prefix: "_Z31ncclDevKernel_AllGather..."
// and "ncclDevKernel_AllGather(...)" both give "ncclDevKernel_AllGather...".
std::string_view from_prefix(std::string_view name, std::string_view prefix) {
  size_t at = name.find(prefix);
  if (at == std::string_view::npos) return {};
  // Only at the start, or right after a mangling length prefix "_Z<digits>".
  if (at != 0) {
    if (name.substr(0, 2) != "_Z") return {};
    for (size_t i = 2; i < at; ++i)
      if (!std::isdigit(static_cast<unsigned char>(name[i]))) return {};
  }
  return name.substr(at + prefix.size());
}

// Operation words as NCCL spells them in kernel and API names, longest first so "AllReduce" is not read
// as "Reduce" and "ReduceScatter" not as "Reduce".
constexpr std::pair<std::string_view, const char*> kOps[] = {
    {"AllGather", keys::kAllGather},   {"ReduceScatter", keys::kReduceScatter}, {"AllReduce", keys::kAllReduce},
    {"AllToAll", "all_to_all"},        {"AlltoAll", "all_to_all"},              {"SendRecv", "send_recv"},
    {"Broadcast", "broadcast"},        {"Reduce", "reduce"},                    {"Send", "send_recv"},
    {"Recv", "send_recv"},
};

std::string op_at_start(std::string_view rest) {
  for (const auto& [word, kind] : kOps) {
    if (rest.substr(0, word.size()) != word) continue;
    // The word must end there: "Reduce_" or "Reduce(" but not "ReduceFoo".
    if (rest.size() == word.size() || rest[word.size()] == '_' || rest[word.size()] == '(') return kind;
  }
  return "";
}

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

bool is_nccl_kernel(std::string_view name) {
  return !from_prefix(name, "ncclDevKernel_").empty() || !from_prefix(name, "ncclKernel_").empty();
}

std::string nccl_kernel_collective(std::string_view name) {
  std::string_view rest = from_prefix(name, "ncclDevKernel_");
  if (rest.empty()) rest = from_prefix(name, "ncclKernel_");
  return rest.empty() ? "" : op_at_start(rest);
}

std::string nccl_range_collective(std::string_view name) {
  if (name.substr(0, 4) != "nccl") return "";
  return op_at_start(name.substr(4));
}

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
