#include "plugins/nsys/sqlite_db.h"

#include <sqlite3.h>

#include <fmt/format.h>

#include "tracer/format/error.h"

namespace shardscope::nsys {

std::string quoted(std::string_view id) {
  std::string out = "\"";
  for (char c : id) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

Db::Db(const std::string& file, const std::string& name) : name_(name) {
  // NOMUTEX: one connection per file and thread, so SQLite need not lock around every column read.
  // immutable=1: the file is never written by anyone while we read it, so SQLite takes no locks and looks
  // for no journal (a read-only folder, a file on a read-only mount, a gzip's inflated copy all open).
  std::string uri = "file:";
  for (char c : file) {
    // Percent-encode what a URI path would read otherwise.
    if (c == '%' || c == '?' || c == '#') uri += fmt::format("%{:02X}", unsigned(static_cast<unsigned char>(c)));
    else
      uri += c;
  }
  uri += "?immutable=1";
  int rc = sqlite3_open_v2(uri.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw trace::TraceError(name_, 0, fmt::format("cannot open it as SQLite: {}", why));
  }
  try {
    Stmt q(*this, "SELECT name FROM sqlite_master WHERE type IN ('table','view')");
    while (q.row()) tables_.emplace(q.text(0));
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

Db::~Db() { sqlite3_close(db_); }

void Db::fail(std::string_view what) const {
  throw trace::TraceError(
      name_, 0, fmt::format("{}: {} (a damaged or not an Nsight Systems database)", what, sqlite3_errmsg(db_)));
}

const std::set<std::string>& Db::columns(std::string_view table) {
  auto it = columns_.find(table);
  if (it != columns_.end()) return it->second;
  std::set<std::string> cols;
  if (has_table(table)) {
    Stmt q(*this, "PRAGMA table_info(" + quoted(table) + ")");
    while (q.row()) cols.emplace(q.text(1));
  }
  return columns_.emplace(std::string(table), std::move(cols)).first->second;
}

Stmt::Stmt(const Db& db, const std::string& sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql.c_str(), int(sql.size()), &s_, nullptr) != SQLITE_OK)
    db.fail("cannot read it");
}

Stmt::~Stmt() { sqlite3_finalize(s_); }

Stmt& Stmt::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(s_, i, v) != SQLITE_OK) db_.fail("cannot read it");
  return *this;
}

bool Stmt::row() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail("cannot read it");
}

bool Stmt::null(int c) const { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
int64_t Stmt::i64(int c) const { return sqlite3_column_int64(s_, c); }
int64_t Stmt::i64_or(int c, int64_t null) const {
  int64_t v = sqlite3_column_int64(s_, c);
  return v == 0 && sqlite3_column_type(s_, c) == SQLITE_NULL ? null : v;
}
double Stmt::f64(int c) const { return sqlite3_column_double(s_, c); }
std::string_view Stmt::text(int c) const {
  const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s_, c));
  return t ? std::string_view(t, size_t(sqlite3_column_bytes(s_, c))) : std::string_view();
}
bool Stmt::is_text(int c) const { return sqlite3_column_type(s_, c) == SQLITE_TEXT; }
int Stmt::columns() const { return sqlite3_column_count(s_); }

}  // namespace shardscope::nsys
