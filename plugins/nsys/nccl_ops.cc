#include "plugins/nsys/nccl_ops.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "model/classify.h"
#include "plugins/nsys/nccl_comms.h"
#include "plugins/nsys/nsys_keys.h"

namespace shardscope::nsys {
namespace k = nsys_keys;

namespace {
// comm_id() of a ProcessRows row.
std::optional<uint64_t> comm_of(const ProcessRows& q, int c) {
  if (q.null(c)) return std::nullopt;
  return q.is_text(c) ? comm_id(q.text(c)) : std::optional<uint64_t>(uint64_t(q.i64(c)));
}
}  // namespace

std::string nccl_ops_table(Db& db) {
  for (const std::string& t : db.tables())  // a std::set: by name
    if (db.has_column(t, k::kCommHash) && db.has_column(t, k::kSeqNumber)) return t;
  return "";
}

NcclOpsResult read_nccl_ops(Export& x, ProcessScans& scans, int64_t key, model::Rank& r,
                            const std::vector<plugins::gpu_join::DeviceWork>& launched) {
  NcclOpsResult out;
  out.table = nccl_ops_table(x.db);
  if (out.table.empty()) return out;
  const std::string& t = out.table;
  auto col = [&](const char* c) -> std::string {
    if (x.db.has_column(t, c)) return quoted(c);
    return "NULL";
  };
  if (!x.db.has_column(t, k::kCorrelationId)) {
    out.missing.push_back(fmt::format("{}.{}", t, k::kCorrelationId));
    return out;  // nothing to link a row to its kernel by
  }
  std::string bytes = x.db.has_column(t, k::kMessageSize) ? quoted(k::kMessageSize) : col(k::kBytes);
  if (bytes == "NULL") out.missing.push_back(fmt::format("{}.{} or {}", t, k::kMessageSize, k::kBytes));
  if (!x.db.has_column(t, k::kOperationId)) out.missing.push_back(fmt::format("{}.{}", t, k::kOperationId));
  // The process's rows, by whichever of its ids the table has.
  std::string id;
  for (const char* c : {k::kGlobalPid, k::kGlobalTid})
    if (id.empty() && x.db.has_column(t, c)) id = c;
  ProcessRows& q = scans.of(key,
                            fmt::format("SELECT {}, {}, {}, {}, {}", quoted(k::kCorrelationId), quoted(k::kCommHash),
                                        quoted(k::kSeqNumber), col(k::kOperationId), bytes),
                            t, id);
  // The device events by correlationId.
  std::vector<uint32_t> by_corr(launched.size());
  for (uint32_t i = 0; i < by_corr.size(); ++i) by_corr[i] = i;
  std::sort(by_corr.begin(), by_corr.end(),
            [&](uint32_t a, uint32_t b) { return launched[a].correlation < launched[b].correlation; });
  std::unordered_map<std::string, model::StringId> groups;
  while (q.row()) {
    ++out.rows;
    if (q.null(0) || q.null(1) || q.null(2)) continue;
    const int64_t corr = q.i64(0), seq = q.i64(2);
    // commHash is a 64-bit hash; an export may write it as an integer or as text ("0x2e43ea04577433ce").
    const std::optional<uint64_t> id = comm_of(q, 1);
    std::string comm = q.is_text(1) ? std::string(q.text(1)) : fmt::format("{:#x}", *id);
    auto [g, fresh] = groups.try_emplace(comm, 0);
    if (fresh) g->second = r.strings.intern(fmt::format("nccl comm {}", comm));
    model::CollectiveKind kind = model::CollectiveKind::None;
    if (!q.null(3)) {
      std::string_view op = q.is_text(3) ? q.text(3) : std::string_view(x.str(q.i64(3)));
      if (op.starts_with("nccl")) op.remove_prefix(4);
      kind = model::collective_from_op_name(op);
    }
    const int64_t size = q.i64_or(4, model::kUnknown);
    auto it = std::lower_bound(by_corr.begin(), by_corr.end(), corr,
                               [&](uint32_t i, int64_t c) { return launched[i].correlation < c; });
    for (; it != by_corr.end() && launched[*it].correlation == corr; ++it) {
      model::Event& e = r.tracks[launched[*it].at.track].events[launched[*it].at.index];
      if (e.cls != model::IntervalClass::Communication) continue;
      e.group = g->second;
      if (seq >= 0 && seq < int64_t(model::kNoSeq)) e.seq = uint32_t(seq);
      if (kind != model::CollectiveKind::None && kind != model::CollectiveKind::Unknown) e.coll = kind;
      if (size != model::kUnknown && size >= 0) e.bytes = size;
      if (id) out.comms.push_back({launched[*it].at.track, launched[*it].at.index, *id});
      ++out.linked;
    }
  }
  return out;
}

}  // namespace shardscope::nsys
