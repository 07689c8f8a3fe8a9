// Nsight Systems databases the tests write: the schema differences between releases (tables and columns
// absent, `text` or `textId`, names inline), several processes and where their ranks come from, NCCL's
// ranges with payloads, and hostile files (not an export, damaged, cut off, values of the wrong type):
// a TraceError naming the file, or a warning, never a crash; the CLI exits 2 with one line.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "plugins/common/sqlite_db.h"
#include "plugins/load/load.h"
#include "tests/plugins/nsys_support.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"
#include "tracer/format/error.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

constexpr int64_t kUtc = 1'700'000'000'000'000'000;
int64_t gpid(int64_t pid) { return (int64_t(1) << 48) | (pid << 24); }  // a VM id above the pid, as exports pack it
int64_t gtid(int64_t pid, int64_t tid) { return gpid(pid) | tid; }

// A small export of schema 3.x: two processes (pids 200 and 100), one kernel and one NCCL kernel each.
void write_hostile_export(const fs::path& file, bool with_env = false, bool payloads = true) {
  test::Sql db(file, true);
  db.exec(
      "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
      "INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, "
      "'ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096>)'), "
      "(3, 'cudaLaunchKernel_v7000'), (4, 'step 1'), (5, 'NCCL');"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER, "
      "streamId INTEGER, "
      "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER);"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER, "
      "correlationId INTEGER, nameId INTEGER);"
      "CREATE TABLE NVTX_EVENTS(start INTEGER, end INTEGER, eventType INTEGER, rangeId INTEGER, text TEXT, globalTid "
      "INTEGER, textId INTEGER, "
      "domainId INTEGER, jsonText TEXT);"
      "CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INTEGER, systemClockNs INTEGER);" +
      fmt::format("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES ({}, 0);", kUtc) +
      "CREATE TABLE PROCESSES(globalPid INTEGER, pid INTEGER, name TEXT);" +
      fmt::format("INSERT INTO PROCESSES VALUES ({}, 200, 'python3'), ({}, 100, 'python3');", gpid(200), gpid(100)) +
      "CREATE TABLE META_DATA_CAPTURE(name TEXT, value TEXT);"
      "CREATE TABLE META_DATA_EXPORT(name TEXT, value TEXT); INSERT INTO META_DATA_EXPORT VALUES "
      "('EXPORT_SCHEMA_VERSION', '3.25.0');");
  for (int64_t pid : {100, 200}) {
    const int64_t base = pid * 1000, corr = pid;
    db.exec(fmt::format(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({0}, {1}, 0, {2}, {3}, 3), ({4}, {5}, 0, {2}, {6}, 3);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({7}, {8}, {9}, 7, {3}, {10}, 1, 1), ({11}, {12}, {9}, 7, {6}, "
        "{10}, 2, 2);"
        // A step range with text through StringIds, NCCL's domain, a group with one all-reduce in it.
        "INSERT INTO NVTX_EVENTS VALUES ({13}, {14}, 59, NULL, NULL, {2}, 4, 0, NULL);"
        "INSERT INTO NVTX_EVENTS VALUES (0, NULL, 75, NULL, 'NCCL', {2}, NULL, 1, NULL);"
        "INSERT INTO NVTX_EVENTS VALUES ({15}, {16}, 59, NULL, 'ncclGroupStart', {2}, NULL, 1, NULL);"
        "INSERT INTO NVTX_EVENTS VALUES ({16}, {17}, 59, NULL, 'ncclAllReduce', {2}, NULL, 1, {18});"
        "INSERT INTO NVTX_EVENTS VALUES ({17}, {19}, 59, NULL, 'ncclGroupEnd', {2}, NULL, 1, NULL);",
        base + 10, base + 20, gtid(pid, pid), corr, base + 60, base + 70, corr + 1, base + 30, base + 50,
        pid == 100 ? 0 : 1, gpid(pid), base + 80, base + 200, base, base + 300, base + 40, base + 45, base + 55,
        payloads ? "'{\"NCCL communicator ID\": 7, \"Message size [bytes]\": 4096}'" : "NULL", base + 75));
    if (with_env)
      db.exec(
          fmt::format("INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_{0}:PID', '{1}'), "
                      "('PROCESS_{0}:ENVIRONMENT_VARIABLE', 'RANK=\"{2}\"'), "
                      "('PROCESS_{0}:ENVIRONMENT_VARIABLE', 'WORLD_SIZE=\"2\"');",
                      pid, pid, pid == 100 ? 1 : 0));
  }
}

const model::Event* find(const model::Rank& r, std::string_view name) {
  for (const model::Track& t : r.tracks)
    for (const model::Event& e : t.events)
      if (r.str(e.name) == name) return &e;
  return nullptr;
}

TEST(NsysExport, ProcessesAreRanksInPidOrderWithKernelsLinkedAndNcclDescribed) {
  test::TempDir d;
  write_hostile_export(d.path() / "run.sqlite");
  plugins::LoadResult r = plugins::load({d.path() / "run.sqlite"});
  ASSERT_EQ(r.trace.ranks.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const model::Rank& rank = r.trace.ranks[size_t(i)];
    const int64_t pid = i == 0 ? 100 : 200, base = pid * 1000;
    EXPECT_EQ(rank.rank, i);
    EXPECT_EQ(rank.metadata["nsys"]["pid"], pid);
    EXPECT_EQ(rank.metadata["nsys"]["rank_from"], "pid order");
    const model::Event* k = find(rank, "gemm_kernel");
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->ts_ns, kUtc + base + 30);
    EXPECT_EQ(k->dur_ns, 20);
    EXPECT_EQ(k->issued_ns, kUtc + base + 10);  // its cudaLaunchKernel, by correlationId
    EXPECT_EQ(k->cls, model::IntervalClass::Compute);
    const model::Event* nccl = find(rank, "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096>)");
    ASSERT_NE(nccl, nullptr);
    EXPECT_EQ(nccl->cls, model::IntervalClass::Communication);
    EXPECT_EQ(nccl->coll, model::CollectiveKind::AllReduce);  // the generic kernel's kind from ncclAllReduce's range
    EXPECT_EQ(nccl->bytes, 4096);                             // from the range's payload
    EXPECT_NE(find(rank, "cudaLaunchKernel"), nullptr);       // without its _v7000
    const model::Event* step = find(rank, "step 1");
    ASSERT_NE(step, nullptr);
    ASSERT_EQ(rank.steps.size(), 1u);  // the NVTX step range, found by the loader's step pattern
    EXPECT_EQ(k->step, 0);
    bool nccl_domain = false;
    for (const model::Track& t : rank.tracks)
      for (const model::Event& e : t.events)
        nccl_domain |= rank.str(e.name) == "ncclAllReduce" && rank.str(e.cat) == "NCCL";
    EXPECT_TRUE(nccl_domain);
  }
}

TEST(NsysExport, RanksFromTheLaunchersEnvironment) {
  test::TempDir d;
  write_hostile_export(d.path() / "run.sqlite", true);
  plugins::LoadResult r = plugins::load({d.path() / "run.sqlite"});
  ASSERT_EQ(r.trace.ranks.size(), 2u);
  EXPECT_EQ(r.trace.ranks[0].metadata["nsys"]["pid"], 200);  // RANK=0 is pid 200
  EXPECT_EQ(r.trace.ranks[0].metadata["nsys"]["rank_from"], "RANK");
  EXPECT_EQ(r.trace.ranks[1].metadata["nsys"]["pid"], 100);
  EXPECT_EQ(r.trace.ranks[0].world_size, 2);
  for (const std::string& w : r.warnings) EXPECT_EQ(w.find("pid order"), std::string::npos) << w;
}

TEST(NsysExport, OlderSchemasDegradeToWhatIsThere) {
  test::TempDir d;
  const fs::path f = d.path() / "old.sqlite";
  {
    // No StringIds, names inline, no globalPid, no session start, NVTX with text only, no runtime table.
    test::Sql db(f, true);
    db.exec(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, "
        "correlationId INTEGER, shortName TEXT);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 150, 0, 7, 1, 'gemm'), (200, 150, 0, 7, 2, 'backwards'), "
        "(NULL, 5, 0, 7, 3, 'no start');"
        "CREATE TABLE NVTX_EVENTS(start INTEGER, end INTEGER, eventType INTEGER, text TEXT, globalTid INTEGER);"
        "INSERT INTO NVTX_EVENTS VALUES (90, 300, 59, 'iteration 4', 5), (95, NULL, 59, 'never ended', 5), (99, NULL, "
        "34, 'a mark', 5);");
  }
  plugins::LoadResult r = plugins::load({f});
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  const model::Rank& rank = r.trace.ranks[0];
  EXPECT_EQ(rank.rank, 0);
  EXPECT_NE(find(rank, "gemm"), nullptr);
  EXPECT_EQ(find(rank, "backwards"), nullptr);  // ends before it starts
  EXPECT_NE(find(rank, "iteration 4"), nullptr);
  EXPECT_NE(find(rank, "a mark"), nullptr);
  EXPECT_EQ(find(rank, "never ended"), nullptr);
  std::string all = fmt::format("{}", fmt::join(r.warnings, "\n"));
  for (const char* said : {"StringIds", "CUPTI_ACTIVITY_KIND_RUNTIME", "TARGET_INFO_SESSION_START_TIME",
                           "NVTX_EVENTS.textId", "CUPTI_ACTIVITY_KIND_KERNEL.demangledName",
                           "2 event(s) with missing or out-of-range times", "1 NVTX range(s) that never ended"})
    EXPECT_NE(all.find(said), std::string::npos) << said << "\n" << all;
}

TEST(NsysExport, HostileValuesAreReadPastNeverCrash) {
  test::TempDir d;
  const fs::path f = d.path() / "odd.sqlite";
  {
    test::Sql db(f, true);
    db.exec(
        "CREATE TABLE StringIds(id INTEGER, value TEXT); INSERT INTO StringIds VALUES (1, NULL), (1, 'twice');"
        "CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INTEGER); INSERT INTO TARGET_INFO_SESSION_START_TIME "
        "VALUES (9223372036854775000);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start, end, deviceId, streamId, correlationId, globalPid, "
        "demangledName, shortName);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 'x', X'00ff', 'corr', 'pid', 99, 1.5), (10, 2000, 0, 0, "
        "NULL, NULL, NULL, NULL),"
        "(-9223372036854775808, 0, 0, 0, 0, 0, 1, 1);"
        "CREATE TABLE NVTX_EVENTS(start, end, eventType, text, globalTid, textId, domainId, jsonText);"
        "INSERT INTO NVTX_EVENTS VALUES (1, 2, 59, 'ncclSend', 0, NULL, 1, "
        "'[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]'),"
        "(1, 2, 59, NULL, 0, 12345, -5, '{\"Message size [bytes]\": 99999999999999999999999}');");
  }
  plugins::LoadResult r;
  ASSERT_NO_THROW(r = plugins::load({f}));
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  std::string all = fmt::format("{}", fmt::join(r.warnings, "\n"));
  EXPECT_NE(all.find("out-of-range times"), std::string::npos) << all;  // the session start pushes them past int64
}

// fuzz_nsys_grammar's regress_duration_overflow: a start near INT64_MIN and a small end each fit, their
// difference does not. The row is counted out of range, never kept with a wrapped (negative) duration.
TEST(NsysExport, ASpanWiderThanInt64IsOutOfRangeNotANegativeDuration) {
  test::TempDir d;
  const fs::path f = d.path() / "wide.sqlite";
  {
    test::Sql db(f, true);
    db.exec(
        "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT); INSERT INTO StringIds VALUES (1, 'k');"
        "CREATE TABLE TARGET_INFO_SESSION_START_TIME(utcEpochNs INTEGER); INSERT INTO TARGET_INFO_SESSION_START_TIME "
        "VALUES (0);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start, end, deviceId, streamId, correlationId, globalPid, "
        "demangledName, shortName);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (-9223372036854775708, 200, 0, 7, 1, 0, 1, 1),"
        "(100, 300, 0, 7, 2, 0, 1, 1);");
  }
  plugins::LoadResult r;
  ASSERT_NO_THROW(r = plugins::load({f}));
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  std::vector<int64_t> durations;
  for (const model::Track& t : r.trace.ranks[0].tracks)
    for (const model::Event& e : t.events) durations.push_back(e.dur_ns);
  EXPECT_EQ(durations, std::vector<int64_t>{200});  // the well-formed kernel alone
  std::string all = fmt::format("{}", fmt::join(r.warnings, "\n"));
  EXPECT_NE(all.find("out-of-range times"), std::string::npos) << all;
}

TEST(NsysExport, NotAnExportDamagedOrCutOffIsOneError) {
  test::TempDir d;
  const fs::path other = d.path() / "other.sqlite";
  {
    test::Sql db(other, true);
    db.exec("CREATE TABLE meta(key TEXT, value TEXT); INSERT INTO meta VALUES ('a', 'b');");
  }
  try {
    plugins::load({other});
    FAIL() << "loaded a database that is not an export";
  } catch (const trace::TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("not an Nsight Systems export"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(other.string()), std::string::npos) << e.what();
  }
  // A real export cut off, and one with its pages overwritten: SQLite's error, as a TraceError.
  const fs::path real =
      test::inflate_into(fs::path(SHARDSCOPE_DATA_DIR) / "nsys_2gpu" / "h100_2gpu_1s.sqlite.gz", d.path());
  std::string bytes;
  {
    std::ifstream in(real, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const fs::path cut = d.path() / "cut.sqlite", damaged = d.path() / "damaged.sqlite";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 3);
  std::string garbled = bytes;
  for (size_t i = 4096; i < garbled.size(); i += 97) garbled[i] = char(garbled[i] ^ 0x5a);
  std::ofstream(damaged, std::ios::binary) << garbled;
  for (const fs::path& f : {cut, damaged}) {
    try {
      plugins::LoadResult r = plugins::load({f});
      ADD_FAILURE() << f << " loaded " << r.trace.ranks.size() << " rank(s)";
    } catch (const trace::TraceError& e) {
      EXPECT_NE(std::string(e.what()).find(f.string()), std::string::npos) << e.what();
    }
  }
  // The CLI: exit 2, one line.
  for (const fs::path& f : {other, cut, damaged}) {
    auto run = test::run({SHARDSCOPE_BIN, "report", f.string()});
    EXPECT_EQ(run.rc, 2) << f << run.out << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
}

// An export is data, never code: an expected table replaced by an endless recursive view is skipped and
// named in one warning line (never run), and a file of views alone is one error line naming them.
TEST(NsysExport, ViewsInAnExportNeverRun) {
  test::TempDir d;
  const fs::path f = d.path() / "view.sqlite";
  write_hostile_export(f);
  constexpr const char* kEndless =
      " AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x AS start, x + 1 AS end, 0 AS "
      "deviceId, 7 AS streamId, x AS correlationId, 0 AS globalPid, 1 AS demangledName, 1 AS shortName, x AS id, "
      "'v' AS value FROM r;";
  {
    test::Sql db(f, true);
    db.exec(std::string("DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL") + kEndless);
  }
  const std::string warning = "CUPTI_ACTIVITY_KIND_KERNEL (view) skipped (a file's views and virtual tables never run)";
  plugins::LoadResult r = plugins::load({f});
  EXPECT_EQ(r.trace.ranks.size(), 2u);
  EXPECT_EQ(find(r.trace.ranks[0], "gemm_kernel"), nullptr);
  std::string all = fmt::format("{}", fmt::join(r.warnings, "\n"));
  EXPECT_NE(all.find(f.string() + ": " + warning), std::string::npos) << all;
  auto run = test::run({SHARDSCOPE_BIN, "report", f.string()});
  EXPECT_EQ(run.rc, 0) << run.err;
  EXPECT_NE(run.err.find("shardscope: warning: " + f.string() + ": " + warning), std::string::npos) << run.err;

  const fs::path views = d.path() / "views.sqlite";
  {
    test::Sql db(views, true);
    db.exec(std::string("CREATE VIEW StringIds") + kEndless);
  }
  run = test::run({SHARDSCOPE_BIN, "report", views.string()});
  EXPECT_EQ(run.rc, 2) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_NE(run.err.find("not an Nsight Systems export"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("StringIds (view) skipped"), std::string::npos) << run.err;
}

// A capture of thousands of processes says its ranks in one short line: the first few, then a count
// (issue #40: inspect printed every pid -> rank pair on one 68 KB line).
TEST(NsysExport, ALongListOfRanksIsCutWithACount) {
  test::TempDir d;
  const fs::path f = d.path() / "many.sqlite";
  {
    test::Sql db(f, true);
    db.exec(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER, "
        "correlationId INTEGER, nameId INTEGER);");
    std::string rows;
    for (int64_t pid = 1; pid <= 3000; ++pid)
      rows += fmt::format("{}({}, {}, 0, {}, {}, 0)", rows.empty() ? "" : ", ", pid * 10, pid * 10 + 5, gtid(pid, pid),
                          pid);
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES " + rows);
  }
  auto run = test::run({SHARDSCOPE_BIN, "inspect", f.string()});
  EXPECT_EQ(run.rc, 0) << run.err;
  EXPECT_NE(run.err.find("3000 processes and no rank variable"), std::string::npos) << run.err.substr(0, 2000);
  EXPECT_NE(run.err.find("(pid 1 -> rank 0, pid 2 -> rank 1, pid 3 -> rank 2, pid 4 -> rank 3, ... and 2996 more)\n"),
            std::string::npos)
      << run.err.substr(0, 2000);
  for (size_t at = 0, nl; (nl = run.err.find('\n', at)) != std::string::npos; at = nl + 1)
    EXPECT_LE(nl - at, 330u) << run.err.substr(at, 400);
}

// `processes` processes (pids 1.., every third with a VM id above its pid, so that key order is not pid
// order) sharing `calls` CUDA calls and as many kernels, dealt out round-robin so that each process's rows
// lie between the others'.
void write_many(const fs::path& f, int64_t processes, int64_t calls) {
  test::Sql db(f, true);
  db.exec(
      "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT); INSERT INTO StringIds VALUES (1, 'gemm_kernel'), "
      "(2, 'cudaLaunchKernel_v7000');"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER, "
      "streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER);"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER, "
      "correlationId INTEGER, nameId INTEGER); BEGIN;");
  auto vm = [](int64_t pid) { return pid % 3 == 0 ? (int64_t(1) << 50) : 0; };
  for (int64_t i = 0; i < calls; ++i) {
    const int64_t pid = 1 + i % processes, t = 1000 + 10 * i;
    db.exec(
        fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 0, {}, {}, 2);"
                    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({}, {}, 0, 7, {}, {}, 1, 1);",
                    t, t + 2, vm(pid) | gtid(pid, pid), i, t + 3, t + 8, i, vm(pid) | gpid(pid)));
  }
  db.exec("COMMIT");
}

struct Read {
  sqlite::Counts used;         // what reading the file took, over what opening it took
  std::vector<size_t> events;  // per rank, in rank order
  std::vector<int64_t> pids;
};

Read read_counting(const fs::path& f) {
  const sqlite::Counts before = sqlite::counts();
  plugins::LoadResult r = plugins::load({f}, {.threads = 1});
  const sqlite::Counts after = sqlite::counts();
  Read out{{after.statements - before.statements, after.rows - before.rows}, {}, {}};
  for (const model::Rank& rank : r.trace.ranks) {
    out.events.push_back(rank.event_count());
    out.pids.push_back(rank.metadata["nsys"]["pid"].get<int64_t>());
  }
  return out;
}

// Reading an export costs its rows, whatever its number of processes (issue #40: a per-process query scanned
// every table once per process, 3,700 processes took minutes). Counted, not timed: the SQLite statements the
// import prepares and the rows they step to, for the same 1,200 calls and 1,200 kernels in 4 and in 400
// processes.
TEST(NsysExport, EachTableIsReadOnceWhateverTheNumberOfProcesses) {
  test::TempDir d;
  const fs::path few = d.path() / "few.sqlite", many = d.path() / "many.sqlite";
  write_many(few, 4, 1200);
  write_many(many, 400, 1200);
  const Read a = read_counting(few), b = read_counting(many);
  // Every rank has its own share: 1,200 / 4 calls and as many kernels each, 1,200 / 400 in the other; pid order.
  ASSERT_EQ(a.events, std::vector<size_t>(4, 600));
  ASSERT_EQ(b.events, std::vector<size_t>(400, 6));
  for (size_t i = 0; i < b.pids.size(); ++i) EXPECT_EQ(b.pids[i], int64_t(i) + 1);
  // The same statements, whatever the number of processes (one a table, none a process).
  EXPECT_EQ(b.used.statements, a.used.statements);
  // Rows: the 2,400 of the two tables once each, and the processes' keys (one row a process from each table
  // they are found in: kernels by globalPid, calls by globalTid), so 2 x 396 more for 396 more processes. A
  // query per process would step to 2,400 more rows each.
  EXPECT_GE(a.used.rows, 2400u);
  EXPECT_LT(a.used.rows, 2400u + 100u);
  EXPECT_EQ(b.used.rows - a.used.rows, 2u * 396u);
}

// Inspecting an export of 10,000 processes: every line short, the pid -> rank list cut with a count.
TEST(NsysExport, TenThousandProcessesInspectInShortLines) {
  test::TempDir d;
  const fs::path f = d.path() / "ten_thousand.sqlite";
  write_many(f, 10000, 10000);
  auto run = test::run({SHARDSCOPE_BIN, "inspect", f.string()});
  EXPECT_EQ(run.rc, 0) << run.err.substr(0, 2000);
  EXPECT_NE(run.err.find("10000 processes and no rank variable"), std::string::npos) << run.err.substr(0, 2000);
  EXPECT_NE(run.err.find(", ... and 9996 more)\n"), std::string::npos) << run.err.substr(0, 2000);
  size_t lines = 0;
  for (const std::string* out : {&run.err, &run.out})
    for (size_t at = 0, nl; (nl = out->find('\n', at)) != std::string::npos; at = nl + 1, ++lines)
      EXPECT_LE(nl - at, 330u) << out->substr(at, 400);
  // The 10,000 ranks each listed (rank, events, span, tracks header, two tracks), in short lines.
  EXPECT_GT(lines, 10000u * 5);
}

// A table WITHOUT ROWID (no rowid to keep a process's rows in order by) is read all the same, each row its
// process's.
TEST(NsysExport, ATableWithoutRowidIsReadByProcess) {
  test::TempDir d;
  const fs::path f = d.path() / "no_rowid.sqlite";
  {
    test::Sql db(f, true);
    db.exec(
        "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT); INSERT INTO StringIds VALUES (1, 'gemm');"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER, "
        "streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER, "
        "PRIMARY KEY (start, globalPid)) WITHOUT ROWID;");
    std::string rows;
    for (int64_t i = 0; i < 9; ++i)  // pids 1, 2, 3 in turn: 3 kernels each
      rows += fmt::format("{}({}, {}, 0, 7, {}, {}, 1, 1)", rows.empty() ? "" : ", ", 100 + 10 * i, 105 + 10 * i, i,
                          gpid(1 + i % 3));
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES " + rows);
  }
  plugins::LoadResult r = plugins::load({f}, {.threads = 1});
  ASSERT_EQ(r.trace.ranks.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.trace.ranks[i].metadata["nsys"]["pid"], int64_t(i) + 1);
    EXPECT_EQ(r.trace.ranks[i].event_count(), 3u);
  }
}

}  // namespace
