// A read-only SQLite database for the Nsight Systems importer: opened immutable (no locks, no journal, never
// written), statements that throw trace::TraceError naming the file, and what tables and columns it has.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace shardscope::nsys {

class Db {
 public:
  // `file`: what to open; `name`: what messages say. Throws trace::TraceError when SQLite cannot open it.
  Db(const std::string& file, const std::string& name);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  bool has_table(std::string_view table) const { return tables_.count(std::string(table)) > 0; }
  // The table's columns; empty when it is absent.
  const std::set<std::string>& columns(std::string_view table);
  bool has_column(std::string_view table, std::string_view column) {
    return columns(table).count(std::string(column)) > 0;
  }
  const std::set<std::string>& tables() const { return tables_; }
  sqlite3* handle() const { return db_; }
  const std::string& name() const { return name_; }
  [[noreturn]] void fail(std::string_view what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string name_;
  std::set<std::string> tables_;
  std::map<std::string, std::set<std::string>, std::less<>> columns_;
};

class Stmt {
 public:
  Stmt(const Db& db, const std::string& sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt& bind(int i, int64_t v);
  // The next row: false when there is none. Throws on a corrupt page.
  bool row();
  bool null(int c) const;
  int64_t i64(int c) const;
  // The column as an integer, `null` when it is NULL (asking the type only when the value reads 0: the common
  // non-null case costs one call).
  int64_t i64_or(int c, int64_t null) const;
  double f64(int c) const;
  std::string_view text(int c) const;  // valid until the next row()
  bool is_text(int c) const;
  int columns() const;
  sqlite3_stmt* handle() const { return s_; }

 private:
  const Db& db_;
  sqlite3_stmt* s_ = nullptr;
};

// Quotes an identifier for SQL ("a""b").
std::string quoted(std::string_view identifier);

}  // namespace shardscope::nsys
