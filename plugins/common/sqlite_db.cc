#include "plugins/common/sqlite_db.h"

#include <sqlite3.h>

#include <fmt/format.h>

#include "tracer/format/error.h"

namespace shardscope::sqlite {

std::string quoted(std::string_view id) {
  std::string out = "\"";
  for (char c : id) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

namespace {

// immutable=1: the file is never written by anyone while we read it, so SQLite takes no locks and looks for
// no journal (a read-only folder, a file on a read-only mount, a gzip's inflated copy all open).
std::string read_only_uri(const std::string& file) {
  std::string uri = "file:";
  for (char c : file) {
    // Percent-encode what a URI path would read otherwise.
    if (c == '%' || c == '?' || c == '#') uri += fmt::format("%{:02X}", unsigned(static_cast<unsigned char>(c)));
    else
      uri += c;
  }
  return uri + "?immutable=1";
}

}  // namespace

Db::Db(const std::string& file, const std::string& name, const Wording& wording, Mode mode)
    : name_(name), wording_(wording) {
  // NOMUTEX: one connection per file and thread, so SQLite need not lock around every column read.
  const int rc = mode == Mode::kRead
                     ? sqlite3_open_v2(read_only_uri(file).c_str(), &db_,
                                       SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr)
                     : sqlite3_open_v2(file.c_str(), &db_,
                                       SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw trace::TraceError(name_, 0, fmt::format("{}{}", wording_.cannot_open, why));
  }
  if (mode == Mode::kRead) {
    // A file that is not SQLite fails here, at the open, rather than at its first query.
    try {
      tables();
    } catch (...) {
      sqlite3_close(db_);
      throw;
    }
  }
}

Db::~Db() { sqlite3_close(db_); }

void Db::fail() const { fail(sqlite3_errmsg(db_)); }

void Db::fail(std::string_view message) const {
  throw trace::TraceError(name_, 0, fmt::format("{}{}{}", wording_.before, message, wording_.after));
}

void Db::exec(const char* sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string m = msg ? msg : sqlite3_errmsg(db_);
    sqlite3_free(msg);
    fail(m);
  }
}

const std::set<std::string>& Db::tables() const {
  if (!tables_) {
    std::set<std::string> t;
    Stmt q(*this, "SELECT name FROM sqlite_master WHERE type IN ('table','view')");
    while (q.row()) t.emplace(q.text(0));
    tables_ = std::move(t);
  }
  return *tables_;
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
  if (sqlite3_prepare_v2(db.handle(), sql.c_str(), int(sql.size()), &s_, nullptr) != SQLITE_OK) db.fail();
}

Stmt::~Stmt() { sqlite3_finalize(s_); }

Stmt& Stmt::check(int rc) {
  if (rc != SQLITE_OK) db_.fail();
  return *this;
}

Stmt& Stmt::bind(int i, int64_t v) { return check(sqlite3_bind_int64(s_, i, v)); }
Stmt& Stmt::bind(int i, double v) { return check(sqlite3_bind_double(s_, i, v)); }
Stmt& Stmt::bind(int i, std::optional<double> v) { return v ? bind(i, *v) : bind_null(i); }
Stmt& Stmt::bind(int i, std::string_view v) {
  return check(sqlite3_bind_text(s_, i, v.data(), int(v.size()), SQLITE_TRANSIENT));
}
Stmt& Stmt::bind_null(int i) { return check(sqlite3_bind_null(s_, i)); }
Stmt& Stmt::bind_blob(int i, std::span<const uint8_t> v) {
  return check(sqlite3_bind_blob(s_, i, v.data(), int(v.size()), SQLITE_TRANSIENT));
}

void Stmt::run() {
  if (sqlite3_step(s_) != SQLITE_DONE) db_.fail();
  sqlite3_reset(s_);
}

bool Stmt::row() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail();
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
std::span<const uint8_t> Stmt::blob(int c) const {
  const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(s_, c));
  return p ? std::span<const uint8_t>(p, size_t(sqlite3_column_bytes(s_, c))) : std::span<const uint8_t>();
}
bool Stmt::is_text(int c) const { return sqlite3_column_type(s_, c) == SQLITE_TEXT; }
int Stmt::columns() const { return sqlite3_column_count(s_); }

}  // namespace shardscope::sqlite
