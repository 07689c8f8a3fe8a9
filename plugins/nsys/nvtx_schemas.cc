#include "plugins/nsys/nvtx_schemas.h"

#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "plugins/nsys/nsys_keys.h"

namespace shardscope::nsys {
namespace k = nsys_keys;

namespace {

// NVTX_PAYLOAD_ENTRY_TYPE_* (nvToolsExtPayload.h) of the integers a field may be: (size, signed).
bool integer_type(int64_t type, size_t& size, bool& is_signed) {
  switch (type) {
    case 1:
    case 11: size = 1, is_signed = true; return true;  // CHAR, INT8
    case 2:
    case 12:
    case 32: size = 1, is_signed = false; return true;  // UCHAR, UINT8, BYTE
    case 3:
    case 13: size = 2, is_signed = true; return true;  // SHORT, INT16
    case 4:
    case 14: size = 2, is_signed = false; return true;  // USHORT, UINT16
    case 5:
    case 15: size = 4, is_signed = true; return true;  // INT, INT32
    case 6:
    case 16: size = 4, is_signed = false; return true;  // UINT, UINT32
    case 7:
    case 9:
    case 17: size = 8, is_signed = true; return true;  // LONG, LONGLONG, INT64 (LP64)
    case 8:
    case 10:
    case 18:
    case 22:
    case 23: size = 8, is_signed = false; return true;  // ULONG, ULONGLONG, UINT64, SIZE, ADDRESS
    default: return false;
  }
}

// The payload's bytes: a BLOB as it is, or hex text ("0a1b..." or "0x0a1b...") decoded.
std::string payload_bytes(std::string_view b) {
  std::string_view h = b.starts_with("0x") ? b.substr(2) : b;
  const bool hex =
      !h.empty() && h.size() % 2 == 0 && h.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos;
  if (!hex) return std::string(b);
  std::string out;
  for (size_t i = 0; i < h.size(); i += 2) out += char(std::stoi(std::string(h.substr(i, 2)), nullptr, 16));
  return out;
}

}  // namespace

NvtxSchemas::NvtxSchemas(Export& x, std::vector<std::string>& missing) {
  const char *s = k::kPayloadSchemas, *e = k::kPayloadEntries;
  for (const char* t : {s, e})
    if (!x.db.has_table(t)) missing.push_back(t);
  if (!x.db.has_table(s) || !x.db.has_table(e)) return;
  for (auto [t, c] : {std::pair{s, k::kDomainId},
                      {s, k::kSchemaId},
                      {e, k::kDomainId},
                      {e, k::kSchemaId},
                      {e, k::kName},
                      {e, k::kType},
                      {e, k::kOffset}})
    if (!x.db.has_column(t, c)) missing.push_back(fmt::format("{}.{}", t, c));
  if (!missing.empty()) return;
  std::map<std::pair<int64_t, int64_t>, Schema> by_id;
  {
    Stmt q(x.db, fmt::format("SELECT {}, {}, {} FROM {}", quoted(k::kDomainId), quoted(k::kSchemaId),
                             x.column(s, k::kPayloadSize), quoted(s)));
    while (q.row()) {
      Schema& sc = by_id[{q.i64(0), q.i64(1)}];
      sc.domain = q.i64(0), sc.id = q.i64(1), sc.size = q.i64_or(2, -1);
    }
  }
  Stmt q(x.db, fmt::format("SELECT {}, {}, {}, {}, {}, {} FROM {}", quoted(k::kDomainId), quoted(k::kSchemaId),
                           quoted(k::kName), quoted(k::kType), quoted(k::kOffset),
                           x.db.has_column(e, k::kIdx) ? quoted(k::kIdx) : std::string("NULL"), quoted(e)));
  while (q.row()) {
    auto it = by_id.find({q.i64(0), q.i64(1)});
    // Exports leave the first entry's offset NULL (NCCL's "NCCL communicator ID"): the first entry is at 0.
    const bool first = !q.null(5) && q.i64(5) == 0;
    if (it == by_id.end() || q.null(2) || q.null(3) || (q.null(4) && !first)) continue;
    Schema& sc = it->second;
    // Exports repeat a schema's rows (once per process that registered it): keep each name once.
    if (std::none_of(sc.entries.begin(), sc.entries.end(), [&](const Entry& en) { return en.name == q.text(2); }))
      sc.entries.push_back({std::string(q.text(2)), q.i64(3), q.null(4) ? 0 : q.i64(4)});
  }
  for (auto& [key, sc] : by_id) schemas_.push_back(std::move(sc));
}

bool NvtxSchemas::field(int64_t domain, size_t size, std::string_view name, const std::string& bytes,
                        int64_t& value) const {
  uint64_t u = 0;
  bool is_signed = false;
  if (!bits(domain, size, name, bytes, u, is_signed) || (!is_signed && u > uint64_t(INT64_MAX))) return false;
  value = int64_t(u);
  return true;
}

bool NvtxSchemas::bits(int64_t domain, size_t size, std::string_view name, const std::string& bytes, uint64_t& u,
                       bool& is_signed) const {
  const Entry* found = nullptr;
  for (const Schema& sc : schemas_) {
    if (sc.domain != domain || (sc.size >= 0 && size_t(sc.size) != size)) continue;
    for (const Entry& en : sc.entries) {
      if (en.name != name) continue;
      if (found && (found->offset != en.offset || found->type != en.type)) return false;  // the schemas disagree
      found = &en;
    }
  }
  size_t width = 0;
  if (!found || !integer_type(found->type, width, is_signed) || found->offset < 0 ||
      size_t(found->offset) + width > bytes.size())
    return false;
  u = 0;
  std::memcpy(&u, bytes.data() + found->offset, width);  // little-endian, as the x86-64 and Arm hosts NCCL runs on
  if (is_signed && width < 8 && (u >> (width * 8 - 1)) & 1) u |= ~uint64_t(0) << (width * 8);
  return true;
}

NcclPayload NvtxSchemas::decode(int64_t domain, std::string_view range, std::string_view binary,
                                size_t& undescribed) const {
  NcclPayload p;
  const std::string bytes = payload_bytes(binary);
  auto read = [&](const char* name, auto& into, int64_t max) {
    int64_t v = 0;
    if (field(domain, bytes.size(), name, bytes, v) && v >= 0 && v <= max) {
      into = decltype(into)(v);
      p.any = true;
    } else {
      ++undescribed;
    }
  };
  // The communicator, where the schemas have it (NCCL >= 2.25): not counted as undescribed when they do not.
  if (range != k::kNcclGroupStart && range != k::kNcclGroupEnd) {
    uint64_t comm = 0;
    bool is_signed = false;
    if (bits(domain, bytes.size(), k::kPayloadComm, bytes, comm, is_signed)) p.comm = comm, p.any = true;
  }
  if (range.starts_with("ncclCommInit") || range == k::kNcclCommSplit) {
    read(k::kPayloadRanks, p.nranks, INT32_MAX);
    read(k::kPayloadRank, p.rank, INT32_MAX);
    return p;
  }
  if (range == k::kNcclGroupStart || range == k::kNcclGroupEnd || range.starts_with("ncclComm"))
    return p;  // no size to read
  read(k::kPayloadBytes, p.bytes, INT64_MAX);
  if (range == k::kNcclSend || range == k::kNcclRecv) read(k::kPayloadPeer, p.peer, INT32_MAX);
  return p;
}

}  // namespace shardscope::nsys
