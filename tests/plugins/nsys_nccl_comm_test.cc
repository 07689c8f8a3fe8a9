// NCCL's communicators in an export (plugins/nsys/nccl_comms.h): each process's rank from NCCL's
// communicator-init payload when the environment has no rank variable, and each NCCL kernel's group size
// (for busbw) from NCCL's own records, else counted from the file's ranks, said so. Databases written here:
// two processes whose pid order (100, 200) is the opposite of their NCCL ranks (1, 0), three all-reduces of
// 1 MiB each inside NCCL's ranges, payloads binary (the schema rows a real 2026.2 export has for NCCL's) or
// JSON.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "plugins/load/load.h"
#include "plugins/nsys/nccl_comms.h"
#include "tests/plugins/nsys_support.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace shardscope;

namespace {

constexpr int64_t kOneMs = 1'000'000;
constexpr uint64_t kWorld = 0xf1e2d3c4b5a69788;  // above INT64_MAX, as half of all hashes are

struct Options {
  bool json = false;   // payloads as jsonText, else binaryData
  bool init = true;    // each process's ncclCommInitRank range
  bool comm = true;    // the all-reduces' payloads name their communicator
  bool table = false;  // NCCL's composite table, with `table_size` in an nranks column when > 0
  int table_size = 0;
  bool clash = false;  // both processes say NCCL rank 0 (two jobs in one capture)
};

// NCCL's payloads as their schemas lay them out (communicator id at 0, then 8 and 12 or 16).
std::string init_payload(uint64_t comm, int32_t nranks, int32_t rank) {
  std::string b(24, '\0');
  const int32_t dev = rank;
  std::memcpy(b.data(), &comm, 8), std::memcpy(b.data() + 8, &nranks, 4), std::memcpy(b.data() + 12, &rank, 4),
      std::memcpy(b.data() + 16, &dev, 4);
  return b;
}
std::string coll_payload(uint64_t comm, uint64_t bytes) {
  std::string b(24, '\0');
  std::memcpy(b.data(), &comm, 8), std::memcpy(b.data() + 8, &bytes, 8);
  return b;
}

void write_comm_export(const fs::path& file, const Options& o) {
  test::Sql db(file, true);
  db.exec(
      "BEGIN;" + test::export_tables_sql(", jsonText TEXT, binaryData TEXT") +
      "INSERT INTO StringIds VALUES (1, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'), "
      "(2, 'cudaLaunchKernelExC_v11060'), (3, 'AllReduce');"
      "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1779782330000000000, '', '', 0);"
      "INSERT INTO NVTX_EVENTS (start, end, eventType, text, domainId) VALUES (0, NULL, 75, 'NCCL', 1);"
      "CREATE TABLE NVTX_PAYLOAD_SCHEMAS (domainId INTEGER, schemaId INTEGER, name TEXT, type INTEGER, flags INTEGER, "
      "numEntries INTEGER, "
      "payloadSize INTEGER, alignTo INTEGER);"
      "CREATE TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId INTEGER NOT NULL, schemaId INTEGER NOT NULL, idx INTEGER NOT "
      "NULL, flags INTEGER, "
      "type INTEGER, name TEXT, description TEXT, arrayOrUnionDetail INTEGER, offset INTEGER);"
      "INSERT INTO NVTX_PAYLOAD_SCHEMAS VALUES (1, 16777218, NULL, 1, NULL, 4, 24, NULL), (1, 16777223, NULL, 1, NULL, "
      "3, 24, NULL);"
      "INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777218, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, "
      "NULL),"
      "(1, 16777218, 1, NULL, 5, 'No. of ranks', NULL, NULL, 8), (1, 16777218, 2, NULL, 5, 'Rank', NULL, NULL, 12),"
      "(1, 16777218, 3, NULL, 5, 'CUDA device', NULL, NULL, 16),"
      "(1, 16777223, 0, NULL, 18, 'NCCL communicator ID', NULL, NULL, NULL), (1, 16777223, 1, NULL, 22, 'Message size "
      "[bytes]', NULL, NULL, 8),"
      "(1, 16777223, 2, NULL, 16777232, 'Reduction operation', NULL, NULL, 16);");
  if (o.table)
    db.exec(
        fmt::format("CREATE TABLE NCCL_OPERATIONS (start INTEGER, end INTEGER, globalTid INTEGER, correlationId "
                    "INTEGER, operationId INTEGER, "
                    "commHash INTEGER, seqNumber INTEGER, messageSize INTEGER{});",
                    o.table_size > 0 ? ", nranks INTEGER" : ""));
  sqlite3_stmt* nv = nullptr;
  sqlite3_prepare_v2(db.handle(),
                     "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId, jsonText, binaryData) "
                     "VALUES (?, ?, 59, ?, ?, 1, ?, ?)",
                     -1, &nv, nullptr);
  auto range = [&](int64_t start, int64_t end, const char* name, int64_t gtid, const std::string& json_text,
                   const std::string& blob) {
    sqlite3_bind_int64(nv, 1, start), sqlite3_bind_int64(nv, 2, end),
        sqlite3_bind_text(nv, 3, name, -1, SQLITE_TRANSIENT), sqlite3_bind_int64(nv, 4, gtid);
    if (o.json) sqlite3_bind_text(nv, 5, json_text.c_str(), -1, SQLITE_TRANSIENT), sqlite3_bind_null(nv, 6);
    else
      sqlite3_bind_null(nv, 5), sqlite3_bind_blob(nv, 6, blob.data(), int(blob.size()), SQLITE_TRANSIENT);
    sqlite3_step(nv), sqlite3_reset(nv);
  };
  struct Proc {
    int64_t pid, device;
    int nccl_rank;
  };
  for (const Proc& p : {Proc{100, 1, 1}, Proc{200, 0, 0}}) {
    const int64_t gpid = (int64_t(1) << 48) | (p.pid << 24), gtid = gpid | p.pid;
    db.exec(fmt::format("INSERT INTO PROCESSES VALUES ({}, {}, 'python3')", gpid, p.pid));
    if (o.init)
      range(kOneMs, 2 * kOneMs, "ncclCommInitRank", gtid,
            fmt::format(R"({{"NCCL communicator ID": {}, "No. of ranks": 2, "Rank": {}, "CUDA device": {}}})", kWorld,
                        o.clash ? 0 : p.nccl_rank, p.device),
            init_payload(kWorld, 2, o.clash ? 0 : p.nccl_rank));
    for (int i = 0; i < 3; ++i) {
      const int64_t launch = (10 + 10 * i) * kOneMs, start = launch + kOneMs / 10, corr = 50 + i;
      const std::string comm = o.comm ? fmt::format(R"("NCCL communicator ID": {}, )", kWorld) : "";
      range(launch - 1000, launch + 9000, "ncclAllReduce", gtid,
            fmt::format(R"({{{}"Message size [bytes]": {}}})", comm, 1 << 20),
            o.comm ? coll_payload(kWorld, 1 << 20) : std::string(coll_payload(0, 1 << 20)));
      db.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 0, {}, {}, 2, 0)", launch,
                          launch + 5000, gtid, corr));
      db.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({}, {}, {}, 7, {}, {}, 1, 1)", start,
                          start + kOneMs, p.device, corr, gpid));
      if (o.table)
        db.exec(fmt::format("INSERT INTO NCCL_OPERATIONS VALUES ({}, {}, {}, {}, 3, {}, {}, {}{})", launch,
                            launch + 5000, gtid, corr, int64_t(kWorld), i + 1, 1 << 20,
                            o.table_size > 0 ? fmt::format(", {}", o.table_size) : ""));
    }
  }
  sqlite3_finalize(nv);
  if (!o.comm && !o.json) {
    // Binary payloads without the communicator: schemas that do not have it.
    db.exec("DELETE FROM NVTX_PAYLOAD_SCHEMA_ENTRIES WHERE idx = 0");
  }
  db.exec("COMMIT");
}

std::string joined(const std::vector<std::string>& ws) {
  std::string out;
  for (const std::string& w : ws) out += w + "\n";
  return out;
}

// Every NCCL kernel's group size, and the group's name, of one rank.
std::vector<std::pair<int, std::string>> groups(const model::Rank& r) {
  std::vector<std::pair<int, std::string>> out;
  for (const model::Track& t : r.tracks)
    for (const model::Event& e : t.events)
      if (e.cls == model::IntervalClass::Communication) out.emplace_back(e.group_size, std::string(r.str(e.group)));
  return out;
}

// busbw / algbw of the one collective row of each rank in `shardscope report --format json`.
std::vector<double> busbw_over_algbw(const fs::path& db) {
  auto out = test::run({SHARDSCOPE_BIN, "report", db.string(), "--format", "json", "--ranks", "all"});
  EXPECT_EQ(out.rc, 0) << out.err;
  json j = json::parse(out.out, nullptr, false);
  std::vector<double> ratios;
  if (j.is_discarded()) return ratios;
  for (const json& r : j["ranks"]) {
    const json& c = r["collectives"][0];
    EXPECT_EQ(c["bytes"], 3 << 20) << c.dump();
    if (c["busbw_gbps"].is_number() && c["algbw_gbps"].is_number())
      ratios.push_back(c["busbw_gbps"].get<double>() / c["algbw_gbps"].get<double>());
  }
  return ratios;
}

class NcclCommInit : public ::testing::TestWithParam<bool> {};  // JSON payloads, else binary

TEST_P(NcclCommInit, RanksFromNcclNotPidOrderAndGroupSizeFromTheInit) {
  test::TempDir d;
  const fs::path db = d.path() / "nccl.sqlite";
  write_comm_export(db, {.json = GetParam()});
  plugins::LoadResult run = plugins::load({db});
  ASSERT_EQ(run.trace.ranks.size(), 2u);
  std::map<int64_t, int> rank_of_pid;
  for (const model::Rank& r : run.trace.ranks) {
    rank_of_pid[r.metadata["nsys"]["pid"].get<int64_t>()] = r.rank;
    EXPECT_EQ(r.metadata["nsys"]["rank_from"], "NCCL");
    EXPECT_EQ(r.world_size, 2);
    const std::vector<std::pair<int, std::string>> want(3, {2, "nccl comm 0xf1e2d3c4b5a69788"});
    EXPECT_EQ(groups(r), want);
    EXPECT_EQ(r.metadata["nsys"]["group_size_from"], json({{nsys::kSizeFromInit, 3}})) << r.metadata.dump();
  }
  const std::map<int64_t, int> want{{100, 1}, {200, 0}};
  EXPECT_EQ(rank_of_pid, want);
  const std::string w = joined(run.trace.ranks[0].warnings) + joined(run.trace.ranks[1].warnings);
  EXPECT_NE(w.find("ranks from NCCL's communicator-init payloads"), std::string::npos) << w;
  EXPECT_NE(w.find("pid 100 -> rank 1 of 2"), std::string::npos) << w;
  EXPECT_EQ(w.find("pid order"), std::string::npos) << w;
  EXPECT_EQ(w.find("taken as the ranks of this file"), std::string::npos) << w;
  // all-reduce: busbw = algbw * 2 (n - 1) / n, n = 2.
  const std::vector<double> ratios = busbw_over_algbw(db);
  ASSERT_EQ(ratios.size(), 2u);
  for (double x : ratios) EXPECT_NEAR(x, 1.0, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Payloads, NcclCommInit, ::testing::Values(false, true),
                         [](const auto& i) { return i.param ? "Json" : "Binary"; });

// Two processes that NCCL says are both rank 0: not believed; pid order, said so.
TEST(NsysNcclComm, ClashingNcclRanksFallBackToPidOrder) {
  test::TempDir d;
  const fs::path db = d.path() / "nccl.sqlite";
  write_comm_export(db, {.clash = true});
  plugins::LoadResult run = plugins::load({db});
  ASSERT_EQ(run.trace.ranks.size(), 2u);
  std::map<int64_t, int> rank_of_pid;
  for (const model::Rank& r : run.trace.ranks) {
    rank_of_pid[r.metadata["nsys"]["pid"].get<int64_t>()] = r.rank;
    EXPECT_EQ(r.metadata["nsys"]["rank_from"], "pid order");
  }
  const std::map<int64_t, int> want{{100, 0}, {200, 1}};
  EXPECT_EQ(rank_of_pid, want);
  const std::string w = joined(run.trace.ranks[0].warnings) + joined(run.trace.ranks[1].warnings);
  EXPECT_NE(w.find("give two processes the same rank"), std::string::npos) << w;
}

// Without a communicator init: ranks in pid order, as before; the size counted from the two processes that use
// the communicator, and the load says so.
TEST(NsysNcclComm, GroupSizeCountedFromTheFilesRanksAndSaidSo) {
  test::TempDir d;
  const fs::path db = d.path() / "nccl.sqlite";
  write_comm_export(db, {.init = false});
  plugins::LoadResult run = plugins::load({db});
  ASSERT_EQ(run.trace.ranks.size(), 2u);
  for (const model::Rank& r : run.trace.ranks) {
    EXPECT_EQ(r.metadata["nsys"]["rank_from"], "pid order");
    const std::vector<std::pair<int, std::string>> want(3, {2, "nccl comm 0xf1e2d3c4b5a69788"});
    EXPECT_EQ(groups(r), want);
    EXPECT_EQ(r.metadata["nsys"]["group_size_from"], json({{nsys::kSizeFromMembers, 3}}));
    const std::string w = joined(r.warnings);
    EXPECT_NE(w.find("group size of 3 NCCL kernel(s) not in NCCL's records"), std::string::npos) << w;
    EXPECT_NE(w.find("nccl comm 0xf1e2d3c4b5a69788: 2 rank(s)"), std::string::npos) << w;
  }
  ASSERT_EQ(busbw_over_algbw(db).size(), 2u);
}

// No communicator anywhere (payloads without it): the size stays unknown, busbw n/a, as before.
TEST(NsysNcclComm, WithoutACommunicatorTheSizeStaysUnknown) {
  for (bool json_payloads : {false, true}) {
    test::TempDir d;
    const fs::path db = d.path() / "nccl.sqlite";
    write_comm_export(db, {.json = json_payloads, .init = false, .comm = false});
    plugins::LoadResult run = plugins::load({db});
    ASSERT_EQ(run.trace.ranks.size(), 2u);
    for (const model::Rank& r : run.trace.ranks) {
      const std::vector<std::pair<int, std::string>> want(3, {0, ""});
      EXPECT_EQ(groups(r), want) << json_payloads;
      EXPECT_FALSE(r.metadata["nsys"].contains("group_size_from"));
    }
    EXPECT_TRUE(busbw_over_algbw(db).empty());
  }
}

// NCCL's table's size column first: it says 4 (two of a four-rank job's processes captured), over the
// communicator init's 2 in these payloads; busbw = algbw * 2 * 3 / 4.
TEST(NsysNcclComm, TheTablesSizeColumnFirst) {
  test::TempDir d;
  const fs::path db = d.path() / "nccl.sqlite";
  write_comm_export(db, {.table = true, .table_size = 4});
  plugins::LoadResult run = plugins::load({db});
  ASSERT_EQ(run.trace.ranks.size(), 2u);
  for (const model::Rank& r : run.trace.ranks) {
    const std::vector<std::pair<int, std::string>> want(3, {4, "nccl comm 0xf1e2d3c4b5a69788"});
    EXPECT_EQ(groups(r), want);
    EXPECT_EQ(r.metadata["nsys"]["group_size_from"], json({{nsys::kSizeFromTable, 3}}));
    EXPECT_EQ(r.metadata["nsys"]["nccl_table"]["size_column"], "nranks");
  }
  const std::vector<double> ratios = busbw_over_algbw(db);
  ASSERT_EQ(ratios.size(), 2u);
  for (double x : ratios) EXPECT_NEAR(x, 1.5, 1e-9);

  // The same table without the column: the init's size.
  const fs::path db2 = d.path() / "nccl2.sqlite";
  write_comm_export(db2, {.table = true});
  plugins::LoadResult run2 = plugins::load({db2});
  for (const model::Rank& r : run2.trace.ranks)
    EXPECT_EQ(r.metadata["nsys"]["group_size_from"], json({{nsys::kSizeFromInit, 3}}));
}

// The order of the sources, and counting only from two processes up.
TEST(NsysNcclComm, SizeSourcesInOrder) {
  nsys::NcclComms c;
  c.members = {{1, {10, 20, 30}}, {2, {10, 20, 30}}, {3, {10, 20, 30}}, {4, {10}}};
  c.table_size = {{1, 8}};
  c.init_size = {{1, 4}, {2, 4}};
  EXPECT_EQ(c.size(1).nranks, 8);
  EXPECT_STREQ(c.size(1).from, nsys::kSizeFromTable);
  EXPECT_EQ(c.size(2).nranks, 4);
  EXPECT_STREQ(c.size(2).from, nsys::kSizeFromInit);
  EXPECT_EQ(c.size(3).nranks, 3);
  EXPECT_STREQ(c.size(3).from, nsys::kSizeFromMembers);
  EXPECT_EQ(c.size(4).nranks, 0);  // one process of a per-rank report: not the group
  EXPECT_EQ(c.size(5).nranks, 0);
  EXPECT_EQ(nsys::comm_id("0xF1E2D3C4B5A69788"), kWorld);
  EXPECT_EQ(nsys::comm_id("42"), 42u);
  EXPECT_FALSE(nsys::comm_id("comm 7"));
}

}  // namespace
