#include "plugins/nsys/nsys_payload.h"

#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "plugins/nsys/nsys_export.h"
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
      else if (c == '"') in_string = false;
    } else if (c == '"') in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > limit) return false;
    } else if (c == '}' || c == ']') --depth;
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
    auto v = integer(*it);
    if (v && *v >= 0) {
      if (it.key() == k::kPayloadBytes) p.bytes = *v, p.any = true;
      else if (it.key() == k::kPayloadPeer && *v <= INT32_MAX) p.peer = int(*v), p.any = true;
      else if (it.key() == k::kPayloadRanks && *v <= INT32_MAX) p.nranks = int(*v), p.any = true;
      else if (it.key() == k::kPayloadRank && *v <= INT32_MAX) p.rank = int(*v), p.any = true;
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

std::map<int64_t, std::pair<int, int>> nccl_ranks(Export& x) {
  std::map<int64_t, std::pair<int, int>> out;
  if (!x.db.has_column(k::kNvtx, k::kJsonText) || !x.db.has_column(k::kNvtx, k::kGlobalTid)) return out;
  Stmt q(x.db, fmt::format("SELECT {} >> {}, {} FROM {} WHERE {} IS NOT NULL", quoted(k::kGlobalTid), k::kTidBits, quoted(k::kJsonText),
                           quoted(k::kNvtx), quoted(k::kJsonText)));
  while (q.row()) {
    NcclPayload p = parse_payload(q.text(1));
    if (p.rank < 0 || p.nranks <= 0 || p.rank >= p.nranks) continue;
    auto [it, fresh] = out.try_emplace(q.i64(0), p.rank, p.nranks);
    if (!fresh && p.nranks > it->second.second) it->second = {p.rank, p.nranks};
  }
  return out;
}

}  // namespace shardscope::nsys
