#include "plugins/nsys/nccl_comms.h"

#include <charconv>

#include <fmt/format.h>

#include "plugins/nsys/nccl_ops.h"
#include "plugins/nsys/nsys_export.h"
#include "plugins/nsys/nsys_keys.h"
#include "plugins/nsys/nsys_payload.h"
#include "plugins/nsys/nvtx_schemas.h"

namespace shardscope::nsys {
namespace k = nsys_keys;

namespace {

// A range that creates a communicator, whose payload says its size and the caller's rank in it.
bool creates_comm(std::string_view name) { return name.starts_with("ncclCommInit") || name == k::kNcclCommSplit; }

void read_ranges(Export& x, NcclComms& out) {
  const char* t = k::kNvtx;
  const bool json = x.db.has_column(t, k::kJsonText), binary = x.db.has_column(t, k::kBinaryData);
  if (!x.db.has_column(t, k::kGlobalTid) || (!json && !binary)) return;
  const std::string j = json ? quoted(k::kJsonText) : "NULL", b = binary ? quoted(k::kBinaryData) : "NULL";
  Stmt q(x.db, fmt::format("SELECT {} >> {}, {}, {}, {}, {}, {} FROM {} WHERE {} IS NOT NULL OR {} IS NOT NULL",
                           quoted(k::kGlobalTid), k::kTidBits, x.column(t, k::kText), x.column(t, k::kTextId),
                           x.column(t, k::kDomainId), j, b, quoted(t), j, b));
  std::optional<NvtxSchemas> schemas;  // read when the first binary payload is met
  std::vector<std::string> missing;
  size_t undescribed = 0;  // said by the ranks' own reads (nsys_rank.cc), not twice here
  while (q.row()) {
    std::string_view name = q.null(1) ? std::string_view(x.str(q.i64(2))) : q.text(1);
    NcclPayload p;
    if (!q.null(4)) {
      p = parse_payload(q.text(4));
    } else if (name.starts_with("nccl")) {
      if (!schemas) schemas.emplace(x, missing);
      p = schemas->decode(q.i64(3), name, q.text(5), undescribed);
    }
    if (!p.any) continue;
    const int64_t process = q.i64(0);
    if (p.comm) out.members[*p.comm].insert(process);
    // JSON payloads are taken whatever their range's name (exports have named them differently).
    if (p.nranks > 0 && (!q.null(4) || creates_comm(name))) {
      if (p.comm) out.init_size.try_emplace(*p.comm, p.nranks);
      if (p.rank >= 0 && p.rank < p.nranks) {
        auto [it, fresh] = out.ranks.try_emplace(process, p.rank, p.nranks);
        if (!fresh && p.nranks > it->second.second) it->second = {p.rank, p.nranks};
      }
    }
  }
}

void read_table(Export& x, NcclComms& out) {
  const std::string t = nccl_ops_table(x.db);
  if (t.empty()) return;
  for (const char* c : k::kNcclTableRanks)
    if (x.db.has_column(t, c)) {
      out.table_size_column = c;
      break;
    }
  std::string process = "NULL";
  for (const char* id : {k::kGlobalPid, k::kGlobalTid})
    if (x.db.has_column(t, id)) {
      process = fmt::format("{} >> {}", quoted(id), k::kTidBits);
      break;
    }
  Stmt q(x.db, fmt::format("SELECT {}, {}, {} FROM {}", quoted(k::kCommHash), process,
                           out.table_size_column.empty() ? std::string("NULL") : nsys::quoted(out.table_size_column),
                           nsys::quoted(t)));
  while (q.row()) {
    const std::optional<uint64_t> comm = comm_id(q, 0);
    if (!comm) continue;
    if (!q.null(1)) out.members[*comm].insert(q.i64(1));
    if (const int64_t n = q.i64_or(2, 0); n > 0 && n <= INT32_MAX) out.table_size.try_emplace(*comm, int(n));
  }
}

}  // namespace

std::optional<uint64_t> comm_id(std::string_view v) {
  int base = 10;
  if (v.starts_with("0x") || v.starts_with("0X")) v.remove_prefix(2), base = 16;
  uint64_t out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out, base);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size()) return std::nullopt;
  return out;
}

std::optional<uint64_t> comm_id(const Stmt& q, int c) {
  if (q.null(c)) return std::nullopt;
  return q.is_text(c) ? comm_id(q.text(c)) : std::optional<uint64_t>(uint64_t(q.i64(c)));
}

CommSize NcclComms::size(uint64_t comm) const {
  CommSize s;
  if (auto m = members.find(comm); m != members.end()) s.members = m->second.size();
  if (auto t = table_size.find(comm); t != table_size.end()) return s.nranks = t->second, s.from = kSizeFromTable, s;
  if (auto i = init_size.find(comm); i != init_size.end()) return s.nranks = i->second, s.from = kSizeFromInit, s;
  if (s.members >= 2) s.nranks = int(s.members), s.from = kSizeFromMembers;
  return s;
}

NcclComms read_nccl_comms(Export& x) {
  NcclComms out;
  read_ranges(x, out);
  read_table(x, out);
  return out;
}

}  // namespace shardscope::nsys
