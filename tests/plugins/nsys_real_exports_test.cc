// The three real Nsight Systems exports (tests/data/nsys_2gpu): every process a rank, and each rank's events
// counted against what SQLite itself says the file holds for that process, kernels linked to their CUDA
// call by correlationId, NCCL kernels to NCCL's NVTX ranges, times on the session's UTC clock; then the CLI.
#include <gtest/gtest.h>

#include <cstring>

#include <fmt/format.h>

#include "model/event.h"
#include "plugins/load/load.h"
#include "plugins/nsys/nsys_export.h"
#include "plugins/nsys/nvtx_schemas.h"
#include "tests/plugins/nsys_support.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

const fs::path kDir = fs::path(SHARDSCOPE_DATA_DIR) / "nsys_2gpu";
const char* const kFiles[] = {"mfu_2gpu_before", "mfu_2gpu_after", "h100_2gpu_1s"};

struct Counted {
  int64_t kernels = 0, nccl = 0, memcpy = 0, memset = 0, sync = 0, runtime = 0, ranges = 0, linked = 0,
          unlinked_nccl = 0, all_to_all = 0;
  int64_t first_kernel = INT64_MAX;
  bool stripped_names = true;
};

Counted count(const model::Rank& r) {
  Counted c;
  for (const model::Track& t : r.tracks)
    for (const model::Event& e : t.events) {
      std::string_view cat = r.str(e.cat), name = r.str(e.name);
      if (t.kind == model::TrackKind::DeviceStream) {
        EXPECT_EQ(t.name, fmt::format("GPU {} stream {}", t.pid, t.tid));
        EXPECT_TRUE(e.is_device()) << name;
        if (cat == "kernel") {
          ++c.kernels;
          c.first_kernel = std::min(c.first_kernel, e.ts_ns);
          if (e.issued_ns != model::kUnknown) ++c.linked;
          if (e.cls == model::IntervalClass::Communication) {
            ++c.nccl;
            // NCCL's all-to-all runs as send/recv kernels; PyTorch's "nccl:all_to_all" range names it.
            EXPECT_TRUE(e.coll == model::CollectiveKind::SendRecv || e.coll == model::CollectiveKind::AllToAll) << name;
            c.all_to_all += e.coll == model::CollectiveKind::AllToAll;
          }
        }
        c.memcpy += cat == "gpu_memcpy";
        c.memset += cat == "gpu_memset";
        c.sync += cat == "cuda_sync";
      } else {
        EXPECT_FALSE(e.is_device()) << name;
        c.runtime += cat == "cuda_runtime" || cat == "cuda_driver";
        if (cat == "nvtx" || cat.starts_with("nvtx domain")) ++c.ranges;
        if (name.find(", op_id = ") != std::string_view::npos) c.stripped_names = false;
      }
    }
  return c;
}

class RealExports : public ::testing::TestWithParam<const char*> {};

TEST_P(RealExports, EachProcessIsARankWithWhatTheFileHoldsForIt) {
  test::TempDir d;
  const fs::path db = test::inflate_into(kDir / (std::string(GetParam()) + ".sqlite.gz"), d.path());
  test::Sql sql(db);
  plugins::LoadResult loaded = plugins::load({db});
  ASSERT_EQ(loaded.trace.ranks.size(), 2u);
  // torchrun's environment has no RANK: the ranks follow pid order, and the load says so.
  std::string warnings = fmt::format("{}", fmt::join(loaded.warnings, "\n"));
  EXPECT_NE(warnings.find("ranks given in pid order"), std::string::npos) << warnings;
  const int64_t utc = sql.one("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME");
  int64_t last_pid = -1;
  for (size_t i = 0; i < 2; ++i) {
    const model::Rank& r = loaded.trace.ranks[i];
    EXPECT_EQ(r.rank, int(i));
    EXPECT_EQ(r.world_size, 2);
    EXPECT_EQ(r.format, "nsys");
    const int64_t pid = r.metadata["nsys"]["pid"].get<int64_t>();
    EXPECT_GT(pid, last_pid);  // pid order
    last_pid = pid;
    const std::string of_pid = fmt::format("(globalPid >> 24) & 16777215 = {}", pid);
    const std::string of_tid = fmt::format("(globalTid >> 24) & 16777215 = {}", pid);
    Counted c = count(r);
    EXPECT_EQ(c.kernels, sql.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE " + of_pid));
    EXPECT_EQ(c.memcpy, sql.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE " + of_pid));
    EXPECT_EQ(c.memset, sql.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE " + of_pid));
    // Stream-bound ones only: 0xFFFFFFFF is CUPTI's "no stream" (a host thread waiting on an event).
    EXPECT_EQ(c.sync, sql.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE streamId IS NOT NULL AND "
                              "streamId != 4294967295 AND " +
                              of_pid));
    EXPECT_EQ(c.runtime, sql.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE " + of_tid));
    EXPECT_EQ(
        c.ranges,
        sql.one("SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NOT NULL AND " + of_tid));
    EXPECT_EQ(
        c.linked,
        sql.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE " + of_pid +
                " AND EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = k.correlationId AND "
                "r.globalTid >> 24 = k.globalPid >> 24)"));
    EXPECT_GT(c.linked, 0);
    EXPECT_EQ(c.nccl, sql.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = "
                              "k.shortName WHERE s.value LIKE "
                              "'nccl%' AND " +
                              of_pid));
    EXPECT_EQ(c.first_kernel, utc + sql.one("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE " + of_pid));
    EXPECT_TRUE(c.stripped_names);  // emit_nvtx's ", op_id = N" is not part of the op's name
    // The NCCL kernels launched inside an ncclGroupEnd (after an ncclSend/ncclRecv pair) are described by the
    // ranges; one whose group began before the window was cut is not.
    if (c.nccl > 0) {
      const int64_t in_group = sql.one(
          "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName JOIN "
          "CUPTI_ACTIVITY_KIND_RUNTIME r ON "
          "r.correlationId = k.correlationId AND r.globalTid >> 24 = k.globalPid >> 24 WHERE s.value LIKE 'nccl%' "
          "AND " +
          fmt::format("(k.globalPid >> 24) & 16777215 = {}", pid) +
          " AND EXISTS (SELECT 1 FROM NVTX_EVENTS n JOIN StringIds g ON g.id = n.textId WHERE g.value = 'ncclGroupEnd' "
          "AND n.globalTid = "
          "r.globalTid AND n.start <= r.start AND n.end >= r.start AND EXISTS (SELECT 1 FROM NVTX_EVENTS m JOIN "
          "StringIds h ON h.id = m.textId "
          "WHERE h.value = 'ncclGroupStart' AND m.globalTid = r.globalTid AND m.end <= n.start AND m.start > n.start - "
          "1000000))");
      EXPECT_GT(in_group, 0);
      // The ones whose launch lies inside PyTorch's "nccl:all_to_all, op_id = N" range on the launching thread
      // are all-to-alls (all but the two whose launch the window cut off, in the before/after pair).
      const int64_t in_all_to_all = sql.one(
          "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName JOIN "
          "CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId AND r.globalTid >> 24 = k.globalPid >> "
          "24 WHERE s.value LIKE 'nccl%' AND " +
          fmt::format("(k.globalPid >> 24) & 16777215 = {}", pid) +
          " AND EXISTS (SELECT 1 FROM NVTX_EVENTS n LEFT JOIN StringIds g ON g.id = n.textId WHERE coalesce(n.text, "
          "g.value) LIKE 'nccl:all_to_all%' AND n.globalTid = r.globalTid AND n.start <= r.start AND n.end >= "
          "r.start)");
      EXPECT_GT(in_all_to_all, 0);
      EXPECT_EQ(c.all_to_all, in_all_to_all);
      EXPECT_EQ(r.metadata["nsys"]["nccl_kernels_described_by_nvtx"].get<int64_t>(), in_group);
    }
    ASSERT_EQ(r.clock_sync.size(), 1u);  // times are UTC ns: the identity pair
  }
}

INSTANTIATE_TEST_SUITE_P(Nsys, RealExports, ::testing::ValuesIn(kFiles));

// NCCL's communicator init in the real exports: their captures began after it, so no ncclCommInit range is
// in them (and no payload bytes at all: binaryData is empty), and ranks stay in pid order with no group size.
// Their schema tables still describe the init's payload: "NCCL communicator ID" first (offset left NULL),
// "No. of ranks" and "Rank" as 32-bit ints at 8 and 12, which is how a payload is read for the rank and size.
TEST(RealExports, NoCommInitInThemButItsSchemaIsReadAsTheyDescribeIt) {
  test::TempDir d;
  const fs::path db = test::inflate_into(kDir / "mfu_2gpu_before.sqlite.gz", d.path());
  test::Sql sql(db);
  EXPECT_EQ(sql.one("SELECT count(*) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId WHERE "
                    "coalesce(n.text, s.value) LIKE 'ncclComm%Init%' "
                    "OR coalesce(n.text, s.value) = 'ncclCommSplit'"),
            0);
  EXPECT_EQ(sql.one("SELECT count(*) FROM NVTX_EVENTS WHERE binaryData IS NOT NULL OR jsonText IS NOT NULL"), 0);
  EXPECT_EQ(sql.one("SELECT count(DISTINCT schemaId) FROM NVTX_PAYLOAD_SCHEMA_ENTRIES WHERE name = 'No. of ranks' AND "
                    "type = 5 AND offset = 8 AND "
                    "schemaId IN (SELECT schemaId FROM NVTX_PAYLOAD_SCHEMA_ENTRIES WHERE name = 'Rank' AND type = 5 "
                    "AND offset = 12)"),
            2);
  nsys::Export x(db.string(), "mfu_2gpu_before.sqlite");
  std::vector<std::string> missing;
  nsys::NvtxSchemas schemas(x, missing);
  ASSERT_TRUE(missing.empty());
  std::string init(24, '\0');
  const uint64_t comm = 0x9a1b2c3d4e5f6071;
  const int32_t nranks = 2, rank = 1;
  std::memcpy(init.data(), &comm, 8), std::memcpy(init.data() + 8, &nranks, 4), std::memcpy(init.data() + 12, &rank, 4);
  size_t undescribed = 0;
  const int64_t nccl_domain =
      sql.one("SELECT domainId FROM NVTX_PAYLOAD_SCHEMA_ENTRIES WHERE name = 'No. of ranks' LIMIT 1");
  nsys::NcclPayload p = schemas.decode(nccl_domain, "ncclCommInitRank", init, undescribed);
  EXPECT_EQ(p.nranks, 2);
  EXPECT_EQ(p.rank, 1);
  EXPECT_EQ(p.comm, comm);
  EXPECT_EQ(undescribed, 0u);
  plugins::LoadResult loaded = plugins::load({db});
  ASSERT_EQ(loaded.trace.ranks.size(), 2u);
  for (const model::Rank& r : loaded.trace.ranks) {
    EXPECT_EQ(r.metadata["nsys"]["rank_from"], "pid order");
    EXPECT_FALSE(r.metadata["nsys"].contains("group_size_from"));
  }
}

TEST(RealExports, GzipAndDirectoriesLoadAsThePlainFile) {
  test::TempDir d;
  const fs::path gz = kDir / "mfu_2gpu_before.sqlite.gz";
  fs::create_directory(d.path() / "run");
  const fs::path db = test::inflate_into(gz, d.path() / "run");
  std::ofstream(d.path() / "run" / "notes.txt") << "not a trace\n";
  // Inflated copies go to the temporary directory: a fresh one here, so what is left in it is this test's.
  const fs::path tmp = d.path() / "tmp";
  fs::create_directory(tmp);
  const char* was = getenv("TMPDIR");
  const std::string saved = was ? was : "";
  setenv("TMPDIR", tmp.c_str(), 1);
  plugins::LoadResult plain = plugins::load({db}), zipped = plugins::load({gz}),
                      dir = plugins::load({d.path() / "run"});
  if (was) setenv("TMPDIR", saved.c_str(), 1);
  else
    unsetenv("TMPDIR");
  ASSERT_EQ(zipped.trace.ranks.size(), 2u);
  ASSERT_EQ(dir.trace.ranks.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(zipped.trace.ranks[i].event_count(), plain.trace.ranks[i].event_count());
    EXPECT_EQ(dir.trace.ranks[i].event_count(), plain.trace.ranks[i].event_count());
    EXPECT_EQ(zipped.trace.ranks[i].source, gz.string());  // messages name the file given, not its inflated copy
  }
  EXPECT_EQ(plugins::expand_inputs({d.path() / "run"}), std::vector<fs::path>{db});
  // The inflated copy is gone once the file is read.
  EXPECT_TRUE(fs::is_empty(tmp)) << fs::directory_iterator(tmp)->path();
}

TEST(RealExports, TheCliReadsThem) {
  const std::string before = (kDir / "mfu_2gpu_before.sqlite.gz").string(),
                    after = (kDir / "mfu_2gpu_after.sqlite.gz").string();
  auto report = test::run({SHARDSCOPE_BIN, "report", before});
  EXPECT_EQ(report.rc, 0) << report.err;
  EXPECT_NE(report.out.find("2 rank(s)"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("(nsys,"), std::string::npos) << report.out;
  auto inspect = test::run({SHARDSCOPE_BIN, "inspect", before});
  EXPECT_EQ(inspect.rc, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("rank 1 of 2 (nsys)"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("GPU 1 stream 15"), std::string::npos) << inspect.out;
  auto diff = test::run({SHARDSCOPE_BIN, "diff", before, after});
  EXPECT_EQ(diff.rc, 0) << diff.err;
  auto prefetch = test::run({SHARDSCOPE_BIN, "check-prefetch", before});
  EXPECT_NE(prefetch.err.find("nothing to check"), std::string::npos) << prefetch.err;  // read, but no FSDP in it
  test::TempDir d;
  auto summarize = test::run({SHARDSCOPE_BIN, "summarize", before, "-o", d.path().string()});
  ASSERT_EQ(summarize.rc, 0) << summarize.err;
  EXPECT_TRUE(fs::exists(d.path() / "mfu_2gpu_before.rank0.sqlite"));
  EXPECT_TRUE(fs::exists(d.path() / "mfu_2gpu_before.rank1.sqlite"));
  auto from_summaries = test::run({SHARDSCOPE_BIN, "report", d.path().string()});
  EXPECT_EQ(from_summaries.rc, 0) << from_summaries.err;
  EXPECT_NE(from_summaries.out.find("2 rank(s)"), std::string::npos) << from_summaries.out;
}

}  // namespace
