// Helpers for the Nsight Systems importer's tests: a gzipped export inflated into a test's folder, and
// questions asked of a database with SQLite itself (the truth the importer's model is checked against).
#pragma once

#include <sqlite3.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace shardscope::test {

// The JSON of a gzipped trace file (the real traces the tests write as exports).
inline nlohmann::json read_gz_json(const std::filesystem::path& p) {
  gzFile in = gzopen(p.c_str(), "rb");
  if (!in) throw std::runtime_error("cannot open " + p.string());
  std::string text;
  char buf[1 << 16];
  for (int n; (n = gzread(in, buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
  gzclose(in);
  return nlohmann::json::parse(text);
}

// The tables of an export that the tests write events into, as Nsight Systems 2026.2 declares them (schema
// 3.25); `nvtx_extra_columns` (", int64Value INTEGER") adds NVTX_EVENTS columns a capture may have.
inline std::string export_tables_sql(const std::string& nvtx_extra_columns = "") {
  return std::string(
      "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
      "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs "
      "INTEGER);"
      "CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT);"
      "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT "
      "NULL, streamId INTEGER NOT "
      "NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL);"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT "
      "NULL, streamId INTEGER NOT "
      "NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL);"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT "
      "NULL, streamId INTEGER NOT "
      "NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER, bytes INTEGER NOT NULL);"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId "
      "INTEGER NOT NULL, streamId "
      "INTEGER, correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL);"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT "
      "NULL, globalTid INTEGER, "
      "correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);"
      "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT, globalTid "
      "INTEGER, textId "
      "INTEGER, domainId INTEGER" +
      nvtx_extra_columns + ");");
}

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
    if (sqlite3_open_v2(file.c_str(), &db_, write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY,
                        nullptr) != SQLITE_OK)
      throw std::runtime_error("cannot open " + file.string());
  }
  ~Sql() { sqlite3_close(db_); }
  Sql(const Sql&) = delete;
  Sql& operator=(const Sql&) = delete;
  // The first column of the first row, as an integer.
  int64_t one(const std::string& sql) const {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
      throw std::runtime_error(sqlite3_errmsg(db_) + (": " + sql));
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
