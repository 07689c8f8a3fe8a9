// libFuzzer target: a rank summary (analyzer/analysis/summary_file.h) as `report`, `diff` and `--mpi` read
// one. An input that begins as SQLite does is the whole file; any other is an edit of a good summary (the
// seed summary_rank0.sqlite), so that the fuzzer spends its runs past SQLite's page checks:
//   byte 0 % 3 == 0: the report record (report.cbor) is the rest, as a blob
//   byte 0 % 3 == 1: a meta key (byte 1 picks it) deleted, or set to an integer, real, text or blob (byte 2)
//   byte 0 % 3 == 2: a column of a table (bytes 1 and 2 pick them) set likewise in every row, or the table
//                    emptied or dropped (byte 3)
// A summary read must give a trace::TraceError in our words or a summary whose rank lies within its world;
// scripts/fuzz caps one allocation at 512 MB here, so a record inflated before its size is checked is a
// finding too.
#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/analysis/summary_file.h"
#include "tracer/format/error.h"
#include "tracer/format/limits.h"

namespace {

std::string g_path;
std::vector<uint8_t> g_base;  // the good summary the edits start from

constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};
// The keys read_summary reads, and one it does not.
constexpr const char* kMetaKeys[] = {"schema_version", "rank",          "world_size",   "rank_given",
                                     "source",         "format",        "clock_mapped", "trace_bytes",
                                     "run_config",     "wall_start_ns", "distributed",  "unknown_key"};

void write_file(const uint8_t* data, size_t size) {
  const int fd = open(g_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  if (write(fd, data, size) != ssize_t(size)) std::abort();
  close(fd);
}

// Binds the rest of the input to `index` as op says (op: 0 NULL, 1 integer, 2 real, 3 text, 4 blob) to `index`.
void bind_value(sqlite3_stmt* st, int index, int op, const uint8_t* data, size_t size) {
  int64_t i = 0;
  std::memcpy(&i, data, std::min(size, sizeof i));
  double d = 0;
  std::memcpy(&d, data, std::min(size, sizeof d));
  switch (op) {
    case 1: sqlite3_bind_int64(st, index, i); break;
    case 2: sqlite3_bind_double(st, index, d); break;
    case 3: sqlite3_bind_text(st, index, reinterpret_cast<const char*>(data), int(size), SQLITE_TRANSIENT); break;
    case 4: sqlite3_bind_blob(st, index, data, int(size), SQLITE_TRANSIENT); break;
    default: sqlite3_bind_null(st, index);
  }
}

// Runs `sql` on the copy of the good summary, with the rest of the input bound as op says (when it has a ?).
bool edit(sqlite3* db, const std::string& sql, int op, const uint8_t* data, size_t size) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return false;
  if (sqlite3_bind_parameter_count(st) > 0) bind_value(st, 1, op, data, size);
  const int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE;
}

// The table and column the two bytes pick among the good summary's.
bool edit_table(sqlite3* db, uint8_t table, uint8_t column, uint8_t op, const uint8_t* data, size_t size) {
  std::vector<std::string> tables, columns;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name", -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  if (tables.empty()) return false;
  const std::string t = tables[table % tables.size()];
  sqlite3_prepare_v2(db, ("SELECT name FROM pragma_table_info('" + t + "')").c_str(), -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW)
    columns.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  if (columns.empty()) return false;
  const std::string c = columns[column % columns.size()];
  switch (op % 7) {
    case 5: return edit(db, "DELETE FROM \"" + t + "\"", 0, data, size);
    case 6: return edit(db, "DROP TABLE \"" + t + "\"", 0, data, size);
    default: return edit(db, "UPDATE \"" + t + "\" SET \"" + c + "\" = ?", op % 7, data, size);
  }
}

// The good summary, edited as the input says, written to g_path.
bool edited(const uint8_t* data, size_t size) {
  if (size < 3) return false;
  write_file(g_base.data(), g_base.size());
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(g_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) std::abort();
  sqlite3_exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF", nullptr, nullptr, nullptr);
  bool ok = false;
  const uint8_t op = data[2];
  switch (data[0] % 3) {
    case 0: ok = edit(db, "UPDATE report SET cbor = ?", 4, data + 1, size - 1); break;
    case 1: {
      const std::string key = kMetaKeys[data[1] % std::size(kMetaKeys)];
      ok = op % 6 == 5 ? edit(db, "DELETE FROM meta WHERE key = '" + key + "'", 0, data, 0)
                       : edit(db, "INSERT OR REPLACE INTO meta VALUES ('" + key + "', ?)", op % 5, data + 3, size - 3);
      break;
    }
    default:
      if (size >= 4) ok = edit_table(db, data[1], data[2], data[3], data + 4, size - 4);
  }
  sqlite3_close(db);
  return ok;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  shardscope::trace::limits().max_text_bytes = 16 << 20;  // as the text targets (fuzz_text_limit.cc)
  g_path = "/dev/shm/shardscope_fuzz_summary_" + std::to_string(getpid()) + ".sqlite";
  std::atexit([] { unlink(g_path.c_str()); });
  std::ifstream base(SHARDSCOPE_FUZZ_SUMMARY_BASE, std::ios::binary);
  g_base.assign(std::istreambuf_iterator<char>(base), {});
  if (g_base.size() < kSqliteMagic.size()) std::abort();  // the seed is missing: every edit would be of nothing
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardscope;
  const bool whole = size >= kSqliteMagic.size() && std::memcmp(data, kSqliteMagic.data(), kSqliteMagic.size()) == 0;
  if (whole) write_file(data, size);
  else if (!edited(data, size))
    return 0;
  // A meta key edited leaves the meta table: the loader must still take the file for a summary (one missing
  // its schema version was called "not an Nsight Systems export").
  if (!whole && data[0] % 3 == 1 && !analysis::is_summary_file(g_path)) std::abort();
  try {
    const analysis::RankSummary s = analysis::read_summary(g_path, 0);
    const plugins::RankHeader& h = s.header;
    if (h.rank < 0 || (h.rank_given && h.world_size > 0 && h.rank >= h.world_size)) std::abort();
  } catch (const trace::TraceError& e) {
    if (std::getenv("SHARDSCOPE_FUZZ_SAY")) std::fprintf(stderr, "%s\n", e.what());  // what a seed meets
    // Our words about the summary, never a library's tag ("[json.exception.parse_error.110] ..."), unless the
    // input holds it and a message quotes it.
    constexpr std::string_view kTag = "[json.exception";
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    if (std::string_view(e.what()).find(kTag) != std::string_view::npos && input.find(kTag) == std::string_view::npos)
      std::abort();
  }
  return 0;
}
