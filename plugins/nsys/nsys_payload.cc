#include "plugins/nsys/nsys_payload.h"

#include <optional>

#include <nlohmann/json.hpp>

#include "plugins/nsys/nccl_comms.h"
#include "plugins/nsys/nsys_keys.h"

namespace shardscope::nsys {
namespace k = nsys_keys;

namespace {

bool shallow(std::string_view t, int limit) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > limit) return false;
    } else if (c == '}' || c == ']')
      --depth;
  }
  return true;
}

std::optional<int64_t> integer(const nlohmann::json& v) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) return std::nullopt;
    return v.get<int64_t>();
  }
  return std::nullopt;
}

void collect(const nlohmann::json& j, NcclPayload& p) {
  if (j.is_array())
    for (const auto& e : j) collect(e, p);
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == k::kPayloadComm) {
      // A 64-bit hash: an unsigned integer, or text.
      if (it->is_number_integer())
        p.comm = it->is_number_unsigned() ? it->get<uint64_t>() : uint64_t(it->get<int64_t>()), p.any = true;
      else if (it->is_string())
        if (auto c = comm_id(it->get_ref<const std::string&>())) p.comm = c, p.any = true;
      continue;
    }
    auto v = integer(*it);
    if (v && *v >= 0) {
      if (it.key() == k::kPayloadBytes) p.bytes = *v, p.any = true;
      else if (it.key() == k::kPayloadPeer && *v <= INT32_MAX)
        p.peer = int(*v), p.any = true;
      else if (it.key() == k::kPayloadRanks && *v <= INT32_MAX)
        p.nranks = int(*v), p.any = true;
      else if (it.key() == k::kPayloadRank && *v <= INT32_MAX)
        p.rank = int(*v), p.any = true;
    }
    if (it->is_structured()) collect(*it, p);
  }
}

}  // namespace

NcclPayload parse_payload(std::string_view text) {
  NcclPayload p;
  if (text.empty() || !shallow(text, 32)) return p;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_discarded()) collect(j, p);
  return p;
}

}  // namespace shardscope::nsys
