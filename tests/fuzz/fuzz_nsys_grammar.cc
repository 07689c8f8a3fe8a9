// libFuzzer target: Nsight Systems exports built from a grammar of the tables and columns the importer reads
// (plugins/nsys/nsys_keys.h), so that the fuzzer's runs reach the importer's queries rather than SQLite's page
// checks (fuzz_nsys_importer's work). The input's bytes choose, statement by statement:
//   a table: a name among the importer's, its columns among the importer's (each typed INTEGER, TEXT, REAL,
//            BLOB or not at all) and rows of values (small and edge integers, reals, the vocabulary's
//            strings, blobs, NULL);
//   a view of such a name: over another table, or an endless recursive one;
//   a trigger, an index, or a virtual table (rtree, fts5, or a module no SQLite has);
//   the journal mode: WAL or not.
// The database is written to a file of this process's own in /dev/shm and read as `report` reads it. The
// importer opens it read-only and immutable and reads only plain tables: a view, trigger or virtual table
// never runs (an endless view that ran would meet the step cap, lowered here: that error aborts), and nothing
// is ever created beside the file (a -wal, -shm or -journal there afterwards aborts).
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "plugins/common/sqlite_db.h"
#include "plugins/nsys/nsys_importer.h"
#include "plugins/nsys/nsys_keys.h"
#include "tracer/format/error.h"

namespace {

namespace k = shardscope::nsys_keys;
std::string g_path;

// The input read from its front, a choice a byte (0 once it is spent), so that a seed is easy to write by hand
// (tests/fuzz/make_seeds.py).
class Choices {
 public:
  Choices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool spent() const { return at_ >= size_; }
  uint8_t byte() { return spent() ? 0 : data_[at_++]; }
  int pick(int n) { return byte() % n; }  // 0 .. n - 1
  template <class T>
  T raw() {  // sizeof(T) bytes, little-endian
    uint8_t b[sizeof(T)] = {};
    for (uint8_t& x : b) x = byte();
    T v;
    std::memcpy(&v, b, sizeof v);
    return v;
  }
  template <class List>
  auto of(const List& list) -> decltype(*std::begin(list)) {
    return *(std::begin(list) + pick(int(std::size(list))));
  }

 private:
  const uint8_t* data_;
  size_t size_, at_ = 0;
};

const std::vector<std::string>& tables() {
  static const std::vector<std::string> t = [] {
    std::vector<std::string> v = {
        k::kStringIds,    k::kKernel,     k::kMemcpy,         k::kMemset,         k::kSync,          k::kGraphTrace,
        k::kRuntime,      k::kNvtx,       k::kPayloadSchemas, k::kPayloadEntries, k::kProcesses,     k::kThreadNames,
        k::kSessionStart, k::kMetaExport, k::kMetaCapture,    k::kOldMetaExport,  "NCCL_OPERATIONS", "OTHER_TABLE"};
    for (const char* u : k::kUnreadGpuWork) v.emplace_back(u);
    return v;
  }();
  return t;
}

const std::vector<std::string>& columns() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> v = {k::kId,         k::kValue,       k::kStart,         k::kEnd,
                                  k::kDeviceId,   k::kStreamId,    k::kCorrelationId, k::kGlobalPid,
                                  k::kGlobalTid,  k::kShortName,   k::kDemangledName, k::kBytes,
                                  k::kCopyKind,   k::kSyncType,    k::kNameId,        k::kEventType,
                                  k::kText,       k::kTextId,      k::kDomainId,      k::kJsonText,
                                  k::kBinaryData, k::kSchemaId,    k::kType,          k::kOffset,
                                  k::kIdx,        k::kPayloadSize, k::kInt64Value,    k::kPid,
                                  k::kName,       k::kUtcEpochNs,  k::kGridX,         k::kBlockX,
                                  k::kGraphId,    k::kCommHash,    k::kSeqNumber,     k::kOperationId,
                                  k::kMessageSize};
    for (const char* r : k::kNcclTableRanks) v.emplace_back(r);
    return v;
  }();
  return c;
}

// Strings an export holds that steer the importer: its meta rows, NCCL's names, a rank's environment.
constexpr const char* kStrings[] = {k::kSchemaVersion,
                                    k::kProductVersion,
                                    "PROCESS_0:PID",
                                    "PROCESS_0:ENVIRONMENT_VARIABLE",
                                    "RANK=1",
                                    "WORLD_SIZE=2",
                                    "RANK=-1",
                                    "WORLD_SIZE=9223372036854775807",
                                    "3.11",
                                    k::kNcclDomain,
                                    k::kNcclGroupStart,
                                    k::kNcclGroupEnd,
                                    k::kNcclSend,
                                    k::kNcclRecv,
                                    k::kNcclCommSplit,
                                    "ncclAllReduce",
                                    "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                                    "ProfilerStep#3",
                                    "{\"commHash\": 1, \"nRanks\": 2}",
                                    ""};
constexpr int64_t kIntegers[] = {0, 1, 2, 3, -1, 34, 59, 60, 70, 71, 75, 1 << 24, INT64_MAX, INT64_MIN, 1000000000};
constexpr const char* kTypes[] = {"INTEGER", "TEXT", "REAL", "BLOB", ""};

std::string sql_name(const std::string& name) { return "\"" + name + "\""; }

// A value as an SQL literal.
std::string literal(Choices& in) {
  switch (in.pick(7)) {
    case 0: return std::to_string(in.of(kIntegers));
    case 1: return std::to_string(in.raw<int64_t>());
    case 2: {
      const double d = in.raw<double>();
      return std::isfinite(d) ? fmt::format("{:.17g}", d) : std::string(d > 0 ? "1e999" : d < 0 ? "-1e999" : "NULL");
    }
    case 3: {
      std::string s = in.of(kStrings), q;
      for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
      return "'" + q + "'";
    }
    case 4: {
      std::string hex;
      for (int n = in.pick(17); n > 0; --n) hex += fmt::format("{:02x}", in.byte());
      return "x'" + hex + "'";
    }
    case 5: return std::to_string(in.raw<uint16_t>() % 4097);
    default: return "NULL";
  }
}

// CREATE TABLE and its rows.
std::string table(Choices& in, const std::string& name) {
  std::vector<std::string> cols;
  for (int n = 1 + in.pick(8); n > 0; --n) {
    const std::string c = in.of(columns());
    if (std::find(cols.begin(), cols.end(), c) == cols.end()) cols.push_back(c);
  }
  std::string sql = "CREATE TABLE " + sql_name(name) + "(";
  for (size_t i = 0; i < cols.size(); ++i) sql += std::string(i ? ", " : "") + sql_name(cols[i]) + " " + in.of(kTypes);
  sql += ");\n";
  for (int rows = in.pick(7); rows > 0; --rows) {
    sql += "INSERT INTO " + sql_name(name) + " VALUES (";
    for (size_t i = 0; i < cols.size(); ++i) sql += std::string(i ? ", " : "") + literal(in);
    sql += ");\n";
  }
  return sql;
}

// One statement of the schema.
std::string statement(Choices& in, int n) {
  const std::string name = in.of(tables());
  const std::string other = in.of(tables());
  switch (in.pick(8)) {
    case 0:
    case 1:
    case 2: return table(in, name);
    case 3:  // a view named as a table the importer reads, over another
      return fmt::format("CREATE VIEW {} AS SELECT * FROM {};\n", sql_name(name), sql_name(other));
    case 4:  // one that never ends, with the columns a kernel table has
      return fmt::format(
          "CREATE VIEW {} AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x AS start, "
          "x + 1 AS \"end\", 0 AS deviceId, 7 AS streamId, x AS correlationId, 1 AS globalPid, 1 AS shortName, "
          "1 AS demangledName, x AS id, 'v' AS value FROM r;\n",
          sql_name(name));
    case 5:
      return fmt::format("CREATE TRIGGER t{} AFTER INSERT ON {} BEGIN INSERT INTO {} SELECT * FROM {}; END;\n", n,
                         sql_name(other), sql_name(other), sql_name(other));
    case 6: {
      constexpr const char* kModules[] = {"rtree(id, x0, x1)", "fts5(start, \"end\")", "no_such_module(a)",
                                          "fts4(value)"};
      return fmt::format("CREATE VIRTUAL TABLE {} USING {};\n", sql_name(name), in.of(kModules));
    }
    default: return fmt::format("CREATE INDEX i{} ON {}({});\n", n, sql_name(other), sql_name(in.of(columns())));
  }
}

bool exists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The databases here hold a few rows: reading one takes thousands of SQLite steps. A view or trigger that
  // ran (an endless one would) meets this cap at once, and the error it gives is a finding.
  shardscope::sqlite::budget().min_steps = uint64_t(1) << 24;
  // A run stopped by a signal never reaches the atexit below, and its database (once an 18 GB WAL) stays in
  // memory: those of processes no longer running go first.
  const std::string prefix = "shardscope_fuzz_nsys_grammar_";
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator("/dev/shm", ec)) {
    const std::string name = f.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && kill(pid_t(pid), 0) != 0 && errno == ESRCH) std::filesystem::remove(f.path(), ec);
  }
  g_path = "/dev/shm/" + prefix + std::to_string(getpid()) + ".sqlite";
  std::atexit([] {
    for (const char* s : {"", "-wal", "-shm", "-journal"}) unlink((g_path + s).c_str());
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardscope;
  Choices in(data, size);
  for (const char* s : {"", "-wal", "-shm", "-journal"}) unlink((g_path + s).c_str());
  const bool wal = in.byte() & 1;
  std::string sql;
  for (int n = 1 + in.pick(12); n > 0 && !in.spent(); --n) sql += statement(in, n);
  const bool say = std::getenv("SHARDSCOPE_FUZZ_SAY") != nullptr;  // what a seed builds and meets
  if (say) std::fprintf(stderr, "%s%s", wal ? "(WAL)\n" : "", sql.c_str());
  sqlite3* db = nullptr;
  if (sqlite3_open(g_path.c_str(), &db) != SQLITE_OK) std::abort();
  sqlite3_exec(db, wal ? "PRAGMA journal_mode = WAL" : "PRAGMA journal_mode = OFF", nullptr, nullptr, nullptr);
  // Building the database is the harness's work, not the reader's: triggers that fire one another double a
  // table at every insert, and one input (corpus/regress_setup_runaway_triggers) ran for minutes here, before
  // the importer saw anything. What the statements run is capped (about 20 M SQLite steps, well under a
  // second); a statement stopped there leaves the database as it was before it.
  uint64_t setup_steps = 0;
  sqlite3_progress_handler(
      db, 1000, [](void* n) { return int(++*static_cast<uint64_t*>(n) > 20'000); }, &setup_steps);
  // Each statement on its own: one SQLite refuses (a column twice, an unknown module) leaves the others.
  for (size_t at = 0, end; (end = sql.find(";\n", at)) != std::string::npos; at = end + 2) {
    std::string one = sql.substr(at, end + 1 - at);
    // A trigger's body holds "; " not ";\n", so a statement is whole here.
    sqlite3_exec(db, one.c_str(), nullptr, nullptr, nullptr);
  }
  sqlite3_progress_handler(db, 0, nullptr, nullptr);
  sqlite3_close(db);
  // A clean close of a WAL database folds and removes its -wal and -shm: anything beside it now is the reader's.
  if (exists(g_path + "-wal") || exists(g_path + "-shm")) return 0;
  static const plugins::NsysImporter importer;
  try {
    plugins::Input input;
    input.path = "fuzz.sqlite";
    input.file = g_path;
    importer.read_ranks(std::move(input), false, [&](model::Rank&& r, model::EventArgs&&) {
      if (say) std::fprintf(stderr, "a rank of %zu events\n", r.event_count());
    });
  } catch (const trace::TraceError& e) {
    if (say) std::fprintf(stderr, "%s\n", e.what());
    if (std::string_view(e.what()).find("million SQLite steps") != std::string_view::npos) std::abort();
  }
  for (const char* s : {"-wal", "-shm", "-journal"})
    if (exists(g_path + s)) std::abort();  // the reader created something beside its input
  return 0;
}
