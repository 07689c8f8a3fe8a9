// The one SQLite wrapper (Nsight Systems exports, rank summaries): a database opened read-only and immutable
// (no locks, no journal, nothing created or written beside it) or created to be written, statements that
// throw trace::TraceError naming the file in their user's words, and what tables and columns a database has.
// A file read is data, never code: only its plain tables are tables here (a view, or a virtual table, named
// like one is skipped and listed), SQL in its schema is untrusted (trusted_schema off, defensive mode), and
// the work and memory SQLite may spend on it are bounded. Column reads are plain calls into SQLite: the
// Nsight importer reads millions of rows through them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace shardscope::sqlite {

// How a user's errors read, each a trace::TraceError(name, 0, ...): `cannot_open` then why SQLite cannot open
// the file; `before`, SQLite's message about a failing statement, `after`. The views must outlive the Db
// (string literals).
struct Wording {
  std::string_view cannot_open;
  std::string_view before;
  std::string_view after;
};

// What reading one file may cost: SQLite's virtual-machine steps (`steps_per_byte` times the file's size,
// and at least `min_steps`: real Nsight exports take under 1 a byte, the importer reading each table once,
// ordered by process where there are several), and the heap all of this process's SQLite connections may hold together (each holds a few
// MB of pages).
struct Budget {
  uint64_t min_steps = uint64_t(1) << 30;
  uint64_t steps_per_byte = 1000;
  int64_t heap_bytes = int64_t(2) << 30;
};
// The process-wide budget, read when a database is opened to read (tests lower it).
Budget& budget();

class Db {
 public:
  enum class Mode {
    kRead,    // read-only and immutable: nobody writes the file while it is open
    kCreate,  // read-write, created when absent
  };
  // `file`: what to open; `name`: what messages say. Throws trace::TraceError when SQLite cannot open it or,
  // opened to read, cannot list its tables (a file that is not SQLite fails here, not at its first query).
  Db(const std::string& file, const std::string& name, const Wording& wording, Mode mode = Mode::kRead);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs statements that return no rows (PRAGMAs, a schema, COMMIT).
  void exec(const char* sql);
  // Whether `table` is a plain table. A view or virtual table of that name is not (it would run SQL or a
  // module of the file's), and is noted in skipped().
  bool has_table(std::string_view table) const;
  // The plain tables.
  const std::set<std::string>& tables() const;
  // What has_table() was asked about and found to be something else: "NAME (view)", "NAME (virtual table)".
  const std::set<std::string>& skipped() const { return skipped_; }
  // The table's columns; empty when it is absent.
  const std::set<std::string>& columns(std::string_view table);
  bool has_column(std::string_view table, std::string_view column) {
    return columns(table).count(std::string(column)) > 0;
  }
  sqlite3* handle() const { return db_; }
  const std::string& name() const { return name_; }
  // Throws the user's error about SQLite's last message (or `message`).
  [[noreturn]] void fail() const;
  [[noreturn]] void fail(std::string_view message) const;

 private:
  sqlite3* db_ = nullptr;
  std::string name_;
  Wording wording_;
  mutable std::optional<std::set<std::string>> tables_;             // read on first use
  mutable std::map<std::string, std::string, std::less<>> others_;  // views and virtual tables: their kind
  mutable std::set<std::string> skipped_;
  uint64_t step_limit_ = 0;      // SQLite steps this file may take
  uint64_t callbacks_left_ = 0;  // progress callbacks left before the read is stopped
  bool over_budget_ = false;
  static int on_progress(void* self);
  std::map<std::string, std::set<std::string>, std::less<>> columns_;
};

// One statement: bind by position (1-based, as SQLite counts), then run() it or read its row()s.
class Stmt {
 public:
  Stmt(const Db& db, const std::string& sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::optional<double> v);  // nullopt: NULL
  Stmt& bind(int i, std::string_view v);       // as TEXT, copied; a view with no data (std::string_view()): NULL
  Stmt& bind_null(int i);
  // `v`, or NULL when it is `null` (the caller's sentinel for a value it does not know).
  Stmt& bind_or_null(int i, int64_t v, int64_t null) { return v == null ? bind_null(i) : bind(i, v); }
  Stmt& bind_blob(int i, std::span<const uint8_t> v);  // copied
  // Steps a statement that returns no rows, then resets it for the next binds.
  void run();
  // The next row: false when there is none. Throws on a corrupt page.
  bool row();

  bool null(int c) const;
  int64_t i64(int c) const;
  // The column as an integer, `null` when it is NULL (asking the type only when the value reads 0: the common
  // non-null case costs one call).
  int64_t i64_or(int c, int64_t null) const;
  double f64(int c) const;
  std::string_view text(int c) const;          // valid until the next row()
  std::span<const uint8_t> blob(int c) const;  // valid until the next row()
  bool is_text(int c) const;
  int columns() const;
  sqlite3_stmt* handle() const { return s_; }

 private:
  Stmt& check(int rc);
  const Db& db_;
  sqlite3_stmt* s_ = nullptr;
};

// What every connection of this process has done, counted as it goes: statements prepared and rows stepped
// to. Tests prove how many passes a read makes over a file by them, not by its time.
struct Counts {
  uint64_t statements = 0;
  uint64_t rows = 0;
};
Counts counts();

// Quotes an identifier for SQL ("a""b").
std::string quoted(std::string_view identifier);

}  // namespace shardscope::sqlite
