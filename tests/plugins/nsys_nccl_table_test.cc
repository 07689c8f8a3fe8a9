// NCCL's composite table of newer Nsight Systems releases (plugins/nsys/nccl_ops.h), in a database written
// here: two processes (ranks), three all-reduces each, rank 1 running them in another order than it was
// issued them (its seqNumbers 2, 1, 3 in time). The instances pair across ranks by (commHash, seqNumber),
// not by position, and the table's message sizes fill MB and algbw in `shardscope report --format json`.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "plugins/load/load.h"
#include "tests/plugins/nsys_support.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace shardscope;

namespace {

constexpr int64_t kMs = 1'000'000;

// `with_table`: write the composite table (named here as no export is known to; found by its columns).
void write_table_export(const fs::path& file, bool with_table) {
  test::Sql db(file, true);
  db.exec(
      "BEGIN;"
      "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO StringIds VALUES (1, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'), "
      "(2, 'cudaLaunchKernelExC_v11060'),"
      "(3, 'AllReduce');"
      "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs "
      "INTEGER);"
      "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1779782330000000000, '', '', 0);"
      "CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT);"
      "INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:PID', '100'), ('PROCESS_0:ENVIRONMENT_VARIABLE', 'RANK=\"0\"'),"
      "('PROCESS_1:PID', '200'), ('PROCESS_1:ENVIRONMENT_VARIABLE', 'RANK=\"1\"');"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT "
      "NULL, streamId INTEGER NOT NULL, "
      "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL);"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT "
      "NULL, globalTid INTEGER, "
      "correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);");
  if (with_table)
    db.exec(
        "CREATE TABLE NCCL_OPERATIONS (start INTEGER, end INTEGER, globalTid INTEGER, correlationId INTEGER, "
        "operationId INTEGER, "
        "commHash INTEGER, seqNumber INTEGER, messageSize INTEGER);");
  // (rank, pid, device, seqNumbers in time order)
  struct Rank {
    int64_t pid, device;
    int seqs[3];
  };
  for (const Rank& r : {Rank{100, 0, {1, 2, 3}}, Rank{200, 1, {2, 1, 3}}}) {
    const int64_t gpid = (int64_t(1) << 48) | (r.pid << 24), gtid = gpid | r.pid;
    for (int i = 0; i < 3; ++i) {
      const int64_t launch = (10 + 10 * i) * kMs, start = launch + kMs / 10, corr = 50 + i;
      const int seq = r.seqs[i];
      const int64_t bytes = int64_t(1) << (19 + seq);  // seq 1: 1 MiB, 2: 2 MiB, 3: 4 MiB
      db.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 0, {}, {}, 2, 0)", launch,
                          launch + 5000, gtid, corr));
      db.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({}, {}, {}, 7, {}, {}, 1, 1)", start,
                          start + kMs, r.device, corr, gpid));
      if (with_table)
        db.exec(fmt::format("INSERT INTO NCCL_OPERATIONS VALUES ({}, {}, {}, {}, 3, 3189235782369383374, {}, {})",
                            launch, launch + 5000, gtid, corr, seq, bytes));
    }
  }
  db.exec("COMMIT");
}

TEST(NsysNcclTable, PairsInstancesBySequenceNumberAndSizesThem) {
  test::TempDir d;
  const fs::path db = d.path() / "nccl.sqlite";
  write_table_export(db, true);
  plugins::LoadResult run = plugins::load({db});
  ASSERT_EQ(run.trace.ranks.size(), 2u);
  for (const model::Rank& r : run.trace.ranks) {
    std::vector<uint32_t> seqs;
    for (const model::Track& t : r.tracks)
      for (const model::Event& e : t.events)
        if (e.cls == model::IntervalClass::Communication) {
          seqs.push_back(e.seq);
          EXPECT_EQ(r.str(e.group), "nccl comm 0x2c42710bf91793ce");
          EXPECT_EQ(e.bytes, int64_t(1) << (19 + e.seq));
        }
    const std::vector<uint32_t> in_time = r.rank == 0 ? std::vector<uint32_t>{1, 2, 3} : std::vector<uint32_t>{2, 1, 3};
    EXPECT_EQ(seqs, in_time);
  }
  auto out = test::run({SHARDSCOPE_BIN, "report", db.string(), "--format", "json", "--ranks", "all"});
  ASSERT_EQ(out.rc, 0) << out.err;
  json j = json::parse(out.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out.out;
  // Each rank: 3 all-reduces of 7 MiB in 3 ms of kernels.
  ASSERT_EQ(j["ranks"].size(), 2u);
  for (const json& r : j["ranks"]) {
    ASSERT_EQ(r["collectives"].size(), 1u) << r["collectives"].dump();
    const json& c = r["collectives"][0];
    EXPECT_EQ(c["kind"], "all_reduce");
    EXPECT_EQ(c["count"], 3);
    EXPECT_EQ(c["bytes"], 7 << 20);
    ASSERT_TRUE(c["algbw_gbps"].is_number()) << c.dump();
    EXPECT_NEAR(c["algbw_gbps"].get<double>(), double(7 << 20) / double(3 * kMs), 1e-9);
  }
  // Paired by sequence: seq 1 ran at 10 ms on rank 0 and 20 ms on rank 1 (rank 1 last), seq 2 the reverse.
  const json& st = j["stragglers"];
  EXPECT_EQ(st["pairing"], "sequence") << st.dump();
  std::map<int64_t, int64_t> last;
  for (const json& i : st["instances"]) {
    EXPECT_TRUE(i["by_seq"].get<bool>());
    last[i["ordinal"].get<int64_t>()] = i["last_rank"].get<int64_t>();
  }
  EXPECT_EQ(last[1], 1) << st.dump();
  EXPECT_EQ(last[2], 0) << st.dump();
}

// Without the table the same kernels pair by position and have no size: what the table adds is real.
TEST(NsysNcclTable, WithoutItInstancesPairByPosition) {
  test::TempDir d;
  const fs::path db = d.path() / "nccl.sqlite";
  write_table_export(db, false);
  auto out = test::run({SHARDSCOPE_BIN, "report", db.string(), "--format", "json", "--ranks", "all"});
  ASSERT_EQ(out.rc, 0) << out.err;
  json j = json::parse(out.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["stragglers"]["pairing"], "position");
  EXPECT_TRUE(j["ranks"][0]["collectives"][0]["bytes"].is_null());
}

}  // namespace
