#include "tracer/format/nccl_names.h"

#include <cctype>
#include <utility>

#include "tracer/format/keys.h"

namespace shardscope::trace {
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
    {"AllGather", keys::kAllGather}, {"ReduceScatter", keys::kReduceScatter},
    {"AllReduce", keys::kAllReduce}, {"AllToAll", "all_to_all"},
    {"AlltoAll", "all_to_all"},      {"SendRecv", "send_recv"},
    {"Broadcast", "broadcast"},      {"Reduce", "reduce"},
    {"Send", "send_recv"},           {"Recv", "send_recv"},
};

std::string op_at_start(std::string_view rest) {
  for (const auto& [word, kind] : kOps) {
    if (rest.substr(0, word.size()) != word) continue;
    // The word must end there: "Reduce_" or "Reduce(" but not "ReduceFoo".
    if (rest.size() == word.size() || rest[word.size()] == '_' || rest[word.size()] == '(') return kind;
  }
  return "";
}

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

}  // namespace shardscope::trace
