#include "plugins/nsys/nsys_export.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "plugins/nsys/nsys_keys.h"
#include "tracer/format/error.h"

namespace shardscope::nsys {
namespace k = nsys_keys;

namespace {

const char* const kActivityTables[] = {k::kKernel, k::kMemcpy, k::kMemset, k::kSync, k::kGraphTrace};

std::optional<int> small_int(std::string_view v) {
  if (!v.empty() && v.front() == '"' && v.size() >= 2 && v.back() == '"') v = v.substr(1, v.size() - 2);
  int out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p != v.data() + v.size() || out < 0 || out > (1 << 24)) return std::nullopt;
  return out;
}

}  // namespace

std::string first_few(const std::vector<std::string>& said) {
  constexpr size_t kShown = 4;
  if (said.size() <= kShown) return fmt::format("{}", fmt::join(said, ", "));
  return fmt::format("{}, ... and {} more", fmt::join(said.begin(), said.begin() + std::ptrdiff_t(kShown), ", "),
                     said.size() - kShown);
}

std::string skipped_note(const Db& db) {
  if (db.skipped().empty()) return "";
  return fmt::format("{} skipped (a file's views and virtual tables never run)", fmt::join(db.skipped(), ", "));
}

Export::Export(const std::string& file, const std::string& name) : db(file, name), file(file) {
  const bool any = db.has_table(k::kStringIds) || db.has_table(k::kNvtx) || db.has_table(k::kRuntime) ||
                   std::any_of(std::begin(kActivityTables), std::end(kActivityTables),
                               [&](const char* t) { return db.has_table(t); });
  if (!any)
    throw trace::TraceError(name, 0,
                            fmt::format("not an Nsight Systems export: a SQLite database with none of its tables ({}, "
                                        "{}, {}, {}); it has {} table(s){}{}",
                                        k::kStringIds, k::kKernel, k::kRuntime, k::kNvtx, db.tables().size(),
                                        db.skipped().empty() ? "" : "; ", skipped_note(db)));
  for (const char* t :
       {k::kStringIds, k::kKernel, k::kMemcpy, k::kMemset, k::kSync, k::kRuntime, k::kNvtx, k::kSessionStart})
    if (!db.has_table(t)) missing.push_back(t);
  if (db.has_table(k::kStringIds) && db.has_column(k::kStringIds, k::kId) && db.has_column(k::kStringIds, k::kValue)) {
    Stmt q(db, fmt::format("SELECT {}, {} FROM {}", quoted(k::kId), quoted(k::kValue), quoted(k::kStringIds)));
    while (q.row()) strings_.emplace(q.i64(0), std::string(q.text(1)));
  }
  if (db.has_table(k::kSessionStart) && db.has_column(k::kSessionStart, k::kUtcEpochNs)) {
    Stmt q(db, fmt::format("SELECT {} FROM {} LIMIT 1", quoted(k::kUtcEpochNs), quoted(k::kSessionStart)));
    if (q.row() && !q.null(0)) base_ns = q.i64(0), has_base = true;
  }
  read_meta();
  for (const char* t : k::kUnreadGpuWork) {
    if (!db.has_table(t)) continue;
    Stmt q(db, fmt::format("SELECT COUNT(*) FROM {}", quoted(t)));
    if (q.row() && q.i64(0) > 0) unread.push_back(fmt::format("{} ({} rows)", t, q.i64(0)));
  }
}

const std::string& Export::str(int64_t id) const {
  static const std::string none;
  auto it = strings_.find(id);
  return it == strings_.end() ? none : it->second;
}

std::string Export::column(std::string_view table, std::string_view col) {
  if (db.has_column(table, col)) return quoted(col);
  if (db.has_table(table)) {
    std::string m = fmt::format("{}.{}", table, col);
    if (std::find(missing.begin(), missing.end(), m) == missing.end()) missing.push_back(m);
  }
  return "NULL";
}

void Export::read_meta() {
  // Schema 3.x names the table META_DATA_EXPORT, 2.x EXPORT_META_DATA; both are (name, value).
  for (const char* t : {k::kMetaExport, k::kOldMetaExport}) {
    if (!db.has_column(t, k::kMetaName) || !db.has_column(t, k::kMetaValue)) continue;
    Stmt q(db, fmt::format("SELECT {}, {} FROM {}", quoted(k::kMetaName), quoted(k::kMetaValue), quoted(t)));
    while (q.row()) {
      if (q.text(0) == k::kSchemaVersion) schema_version = q.text(1);
      else if (q.text(0) == k::kProductVersion)
        product_version = q.text(1);
    }
    return;
  }
}

namespace {

// The processes' keys (globalPid >> kTidBits): by the GPU work they own (globalPid) and the CUDA calls their
// threads made (globalTid).
std::set<int64_t> process_keys(Db& db, std::vector<std::string>& warnings) {
  std::set<int64_t> keys;
  bool by_pid = true;
  for (const char* t : kActivityTables) {
    if (!db.has_table(t)) continue;
    if (!db.has_column(t, k::kGlobalPid)) {
      by_pid = false;
      continue;
    }
    Stmt q(db, fmt::format("SELECT DISTINCT {} >> {} FROM {}", quoted(k::kGlobalPid), k::kTidBits, quoted(t)));
    while (q.row())
      if (!q.null(0)) keys.insert(q.i64(0));
  }
  for (const char* t : {k::kRuntime, k::kNvtx}) {
    if (!keys.empty() && t == std::string_view(k::kNvtx))
      break;  // NVTX alone makes a process a rank only in a capture without CUDA
    if (!db.has_column(t, k::kGlobalTid)) continue;
    Stmt q(db, fmt::format("SELECT DISTINCT {} >> {} FROM {}", quoted(k::kGlobalTid), k::kTidBits, quoted(t)));
    while (q.row())
      if (!q.null(0)) keys.insert(q.i64(0));
  }
  if (!by_pid && keys.size() > 1) {
    // GPU work that does not say its process cannot be dealt out among several.
    warnings.push_back(
        fmt::format("{}: the GPU activity tables have no {} column: all GPU work is read as the first process's",
                    db.name(), k::kGlobalPid));
  }
  if (keys.empty()) keys.insert(0);  // an export with no process ids at all: one rank
  return keys;
}

// The launcher's rank variables in the environments nsys recorded of the processes it launched
// (META_DATA_CAPTURE: PROCESS_n:PID, PROCESS_n:ENVIRONMENT_VARIABLE NAME="value"), given to `out`.
void launcher_ranks(Db& db, std::vector<Process>& out) {
  struct Launched {
    int64_t pid = -1;
    std::optional<int> rank, world;
    size_t priority = 0;  // the rank variable's place in kRankVariables
    std::string from;
  };
  std::map<std::string, Launched> launched;
  if (db.has_column(k::kMetaCapture, k::kMetaName) && db.has_column(k::kMetaCapture, k::kMetaValue)) {
    Stmt q(db, fmt::format("SELECT {}, {} FROM {} WHERE {} LIKE 'PROCESS\\_%' ESCAPE '\\'", quoted(k::kMetaName),
                           quoted(k::kMetaValue), quoted(k::kMetaCapture), quoted(k::kMetaName)));
    while (q.row()) {
      std::string_view n = q.text(0), v = q.text(1);
      size_t colon = n.find(':');
      if (colon == std::string_view::npos) continue;
      Launched& l = launched[std::string(n.substr(0, colon))];
      if (n.substr(colon) == k::kPidSuffix) {
        if (auto p = small_int(v)) l.pid = *p;
      } else if (n.substr(colon) == k::kEnvSuffix) {
        size_t eq = v.find('=');
        if (eq == std::string_view::npos) continue;
        std::string_view var = v.substr(0, eq), val = v.substr(eq + 1);
        for (size_t i = 0; i < std::size(k::kRankVariables); ++i) {
          if (var == k::kRankVariables[i] && (!l.rank || i < l.priority))
            if (auto r = small_int(val)) l.rank = *r, l.from = k::kRankVariables[i], l.priority = i;
          if (var == k::kWorldVariables[i])
            if (auto w = small_int(val); w && *w > 0) l.world = *w;
        }
      }
    }
  }
  std::vector<const Launched*> with_rank;
  for (auto& [n, l] : launched)
    if (l.rank) with_rank.push_back(&l);
  for (Process& p : out)
    for (const Launched* l : with_rank)
      if (l->pid == p.pid || (out.size() == 1 && with_rank.size() == 1))
        p.rank = *l->rank, p.world_size = l->world.value_or(0), p.rank_from = l->from;
}

// NCCL's own rank, from its communicator-init range payloads, for the processes no launcher variable gave one:
// the rank in the process's largest communicator (the world's), where every process without a launcher's rank
// has one and no two share it (two jobs in one capture would).
void nccl_ranks(Db& db, const NcclComms& comms, std::vector<Process>& out, std::vector<std::string>& warnings) {
  std::set<int> taken;
  for (const Process& p : out)
    if (p.rank >= 0) taken.insert(p.rank);
  std::vector<std::pair<Process*, std::pair<int, int>>> from_nccl;
  bool clash = false;
  for (Process& p : out) {
    if (p.rank >= 0) continue;
    auto it = comms.ranks.find(p.key);
    if (it == comms.ranks.end()) continue;
    clash |= !taken.insert(it->second.first).second;
    from_nccl.emplace_back(&p, it->second);
  }
  if (clash) {
    warnings.push_back(
        fmt::format("{}: NCCL's communicator-init payloads give two processes the same rank: not used", db.name()));
  } else if (!from_nccl.empty()) {
    std::vector<std::string> said;
    for (auto& [p, r] : from_nccl) {
      p->rank = r.first, p->world_size = r.second, p->rank_from = "NCCL";
      said.push_back(fmt::format("pid {} -> rank {} of {}", p->pid, r.first, r.second));
    }
    warnings.push_back(fmt::format(
        "{}: ranks from NCCL's communicator-init payloads (the process's largest communicator; no rank variable in the "
        "environment): {}",
        db.name(), first_few(said)));
  }
}

// Several processes and one without a rank: all numbered in pid order, said in a warning.
void pid_order_ranks(Db& db, std::vector<Process>& out, std::vector<std::string>& warnings) {
  if (out.size() > 1 && std::any_of(out.begin(), out.end(), [](const Process& p) { return p.rank < 0; })) {
    std::vector<std::string> said;
    for (size_t i = 0; i < out.size(); ++i) {
      out[i].rank = int(i), out[i].rank_from = "pid order";
      said.push_back(fmt::format("pid {} -> rank {}", out[i].pid, i));
    }
    for (Process& p : out) p.world_size = std::max(p.world_size, int(out.size()));
    warnings.push_back(fmt::format(
        "{}: {} processes and no rank variable (RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK) or NCCL rank for each: ranks "
        "given in pid order ({})",
        db.name(), out.size(), first_few(said)));
  }
}

}  // namespace

std::vector<Process> Export::processes(std::vector<std::string>& warnings) {
  std::set<int64_t> keys = process_keys(db, warnings);
  std::map<int64_t, std::string> names;
  if (db.has_column(k::kProcesses, k::kGlobalPid) && db.has_column(k::kProcesses, k::kName)) {
    Stmt q(db, fmt::format("SELECT {}, {} FROM {}", quoted(k::kGlobalPid), quoted(k::kName), quoted(k::kProcesses)));
    while (q.row()) names[q.i64(0) >> k::kTidBits] = std::string(q.text(1));
  }
  std::vector<Process> out;
  for (int64_t key : keys)
    out.push_back({key, key & k::kTidMask, names.count(key) ? names[key] : std::string(), -1, 0, ""});
  std::sort(out.begin(), out.end(),
            [](const Process& a, const Process& b) { return a.pid != b.pid ? a.pid < b.pid : a.key < b.key; });

  launcher_ranks(db, out);
  comms = read_nccl_comms(*this);
  nccl_ranks(db, comms, out, warnings);
  pid_order_ranks(db, out, warnings);
  return out;
}

}  // namespace shardscope::nsys
