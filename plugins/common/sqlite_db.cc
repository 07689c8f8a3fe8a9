#include "plugins/common/sqlite_db.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "tracer/format/error.h"
#include "tracer/format/limits.h"

namespace shardscope::sqlite {

std::string quoted(std::string_view id) {
  std::string out = "\"";
  for (char c : id) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

Budget& budget() {
  static Budget b;
  return b;
}

namespace {

// Relaxed: counts, read by tests once the reads are over; a row costs one uncontended add.
std::atomic<uint64_t> statements_prepared{0}, rows_stepped{0};

constexpr int kStepsPerCallback = 100000;  // how often SQLite asks on_progress whether to go on

// mode=ro&immutable=1: the file is never written by anyone while we read it, so SQLite takes no locks and
// creates nothing beside it (no journal, no -wal or -shm, even for a WAL-mode file); a read-only folder, a
// file on a read-only mount, a gzip's inflated copy all open. The path is percent-encoded but for the
// characters a URI path keeps as they are; "file://" + an absolute path gives an empty authority.
std::string read_only_uri(const std::string& file) {
  std::string uri = file.starts_with('/') ? "file://" : "file:";
  for (char ch : file) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') uri += ch;
    else
      uri += fmt::format("%{:02X}", unsigned(c));
  }
  return uri + "?mode=ro&immutable=1";
}

}  // namespace

Counts counts() {
  return {statements_prepared.load(std::memory_order_relaxed), rows_stepped.load(std::memory_order_relaxed)};
}

int Db::on_progress(void* self) {
  Db& db = *static_cast<Db*>(self);
  if (db.callbacks_left_ == 0) return db.over_budget_ = true, 1;
  --db.callbacks_left_;
  return 0;
}

Db::Db(const std::string& file, const std::string& name, const Wording& wording, Mode mode)
    : name_(name), wording_(wording) {
  // The heap every SQLite connection shares (process-wide in SQLite), so that no file's SQL makes SQLite
  // take all the memory there is: it fails that statement with "out of memory" instead.
  if (mode == Mode::kRead) sqlite3_hard_heap_limit64(budget().heap_bytes);
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
    // The file's schema is a stranger's SQL: functions with side effects never run from it, and nothing
    // (PRAGMA writable_schema, shadow tables) may change the file; views and triggers never run at all.
    sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
    sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
    std::error_code ec;
    const uint64_t bytes = std::filesystem::file_size(file, ec);
    uint64_t by_size = 0;
    if (ec || __builtin_mul_overflow(bytes, budget().steps_per_byte, &by_size)) by_size = ec ? 0 : UINT64_MAX;
    step_limit_ = std::max(budget().min_steps, by_size);
    callbacks_left_ = step_limit_ / kStepsPerCallback;
    sqlite3_progress_handler(db_, kStepsPerCallback, &Db::on_progress, this);
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

void Db::fail() const {
  // Our own stops, said as what they are rather than SQLite's "interrupted" and "out of memory".
  if (over_budget_)
    fail(fmt::format("stopped after {} million SQLite steps, more than a file of its size takes to read",
                     step_limit_ / 1000000));
  if (sqlite3_errcode(db_) == SQLITE_NOMEM)
    fail(fmt::format("SQLite needed more than {} of memory to read it", trace::show_bytes(budget().heap_bytes)));
  fail(sqlite3_errmsg(db_));
}

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
    // sqlite_master's sql of a virtual table begins CREATE VIRTUAL TABLE: its rows come from a module.
    std::set<std::string> t;
    Stmt q(*this,
           "SELECT name, type, substr(upper(ltrim(sql)), 1, 20) = 'CREATE VIRTUAL TABLE' FROM sqlite_master "
           "WHERE type IN ('table', 'view')");
    while (q.row()) {
      if (q.text(1) == "table" && q.i64(2) == 0) t.emplace(q.text(0));
      else
        others_.emplace(std::string(q.text(0)), q.text(1) == "view" ? "view" : "virtual table");
    }
    tables_ = std::move(t);
  }
  return *tables_;
}

bool Db::has_table(std::string_view table) const {
  if (tables().count(std::string(table))) return true;
  if (auto it = others_.find(table); it != others_.end()) skipped_.insert(fmt::format("{} ({})", table, it->second));
  return false;
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
  statements_prepared.fetch_add(1, std::memory_order_relaxed);
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
  if (rc == SQLITE_ROW) return rows_stepped.fetch_add(1, std::memory_order_relaxed), true;
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
