#include "plugins/nsys/process_rows.h"

#include <sqlite3.h>

#include <utility>

#include <fmt/format.h>

#include "plugins/nsys/nsys_keys.h"

namespace shardscope::nsys {
namespace k = nsys_keys;

namespace {

// Export::processes() order: by pid (the key's low bits), then by key.
bool before(int64_t a, int64_t b) { return std::pair(a & k::kTidMask, a) < std::pair(b & k::kTidMask, b); }

// A table WITHOUT ROWID has no rowid to keep its rows' order within a process by.
// (sqlite::quoted named in full here: for a std::string, std::quoted wins the unqualified call wherever
// <iomanip> is seen, as through nlohmann/json in the libraries' precompiled header.)
bool has_rowid(const Db& db, const std::string& table) {
  sqlite3_stmt* s = nullptr;
  const std::string sql = fmt::format("SELECT rowid FROM {} LIMIT 0", sqlite::quoted(table));
  const bool ok = sqlite3_prepare_v2(db.handle(), sql.c_str(), int(sql.size()), &s, nullptr) == SQLITE_OK;
  sqlite3_finalize(s);
  return ok;
}

// The statement: the rows as they lie for one process; else ordered by process (then as they lie, as a
// per-process scan gave them), the key last, rows whose id is not a number left out (as a range of ids did).
std::string scan_sql(Export& x, const std::string& select, const std::string& table, const std::string& id,
                     bool keyed) {
  if (!keyed) return fmt::format("{} FROM {}", select, sqlite::quoted(table));
  const std::string key = fmt::format("({} >> {})", sqlite::quoted(id), k::kTidBits);
  return fmt::format("{}, {} FROM {} WHERE typeof({}) IN ('integer', 'real') ORDER BY {} & {}, {}{}", select, key,
                     sqlite::quoted(table), sqlite::quoted(id), key, k::kTidMask, key,
                     has_rowid(x.db, table) ? ", rowid" : "");
}

}  // namespace

ProcessRows::ProcessRows(Export& x, const std::string& select, const std::string& table, const std::string& id,
                         bool all)
    : q_(x.db, x.file, scan_sql(x, select, table, id, !all && !id.empty() && x.db.has_column(table, id)), {}),
      keyed_(!all && !id.empty() && x.db.has_column(table, id)),
      all_(all) {}

void ProcessRows::start(int64_t key) {
  // Rows that do not say their process are the first process's (Export::processes() warns so).
  if (!keyed_ && started_ && !all_) done_ = true;
  started_ = true;
  key_ = key;
}

bool ProcessRows::row() {
  while (!done_) {
    if (!pending_ && !q_.row()) {
      done_ = true;
      break;
    }
    if (!keyed_) return true;
    const int64_t k = q_.i64(q_.columns() - 1);
    pending_ = !before(k, key_) && k != key_;  // a later process's: kept for it
    if (pending_) return false;
    if (k == key_) return true;
  }
  return false;
}

ProcessRows& ProcessScans::of(int64_t key, const std::string& select, const std::string& table, const std::string& id) {
  auto it = by_table_.find(table);
  if (it == by_table_.end())
    it = by_table_.emplace(table, std::make_unique<ProcessRows>(x_, select, table, id, all_)).first;
  it->second->start(key);
  return *it->second;
}

}  // namespace shardscope::nsys
