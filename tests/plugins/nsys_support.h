// Helpers for the Nsight Systems importer's tests: a gzipped export inflated into a test's folder, and
// questions asked of a database with SQLite itself (the truth the importer's model is checked against).
#pragma once

#include <sqlite3.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace shardscope::test {

inline std::filesystem::path inflate_into(const std::filesystem::path& gz, const std::filesystem::path& dir) {
  gzFile in = gzopen(gz.c_str(), "rb");
  if (!in) throw std::runtime_error("cannot open " + gz.string());
  std::filesystem::path to = dir / gz.filename().replace_extension();
  std::ofstream out(to, std::ios::binary);
  char buf[1 << 16];
  for (int n; (n = gzread(in, buf, sizeof buf)) > 0;) out.write(buf, n);
  gzclose(in);
  return to;
}

class Sql {
 public:
  explicit Sql(const std::filesystem::path& file, bool write = false) {
    if (sqlite3_open_v2(file.c_str(), &db_, write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
      throw std::runtime_error("cannot open " + file.string());
  }
  ~Sql() { sqlite3_close(db_); }
  Sql(const Sql&) = delete;
  Sql& operator=(const Sql&) = delete;
  // The first column of the first row, as an integer.
  int64_t one(const std::string& sql) const {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) throw std::runtime_error(sqlite3_errmsg(db_) + (": " + sql));
    int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    return v;
  }
  void exec(const std::string& sql) const {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string e = err ? err : "?";
      sqlite3_free(err);
      throw std::runtime_error(e + ": " + sql.substr(0, 200));
    }
  }
  sqlite3* handle() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace shardscope::test
