// NCCL's all-to-all on an Nsight Systems export: NCCL runs it as grouped sends and receives, so its kernel is
// named SendRecv and NCCL's own ranges around the launch are ncclGroupStart, ncclSend/ncclRecv, ncclGroupEnd;
// PyTorch's ProcessGroupNCCL range around them ("nccl:all_to_all, op_id = N" with emit_nvtx, or
// "nccl:alltoall") names the collective. A database written here: one process, three SendRecv launches, the
// first inside "nccl:all_to_all", the second inside "nccl:alltoall", the third inside "nccl:send" only.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "plugins/load/load.h"
#include "tests/plugins/nsys_support.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

constexpr int64_t kUs = 1000;

void write_all_to_all_export(const fs::path& file) {
  test::Sql db(file, true);
  db.exec("BEGIN;" + test::export_tables_sql() +
          "INSERT INTO StringIds VALUES (1, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)'), "
          "(2, 'cudaLaunchKernel_v7000');"
          "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1779782330000000000, '', '', 0);"
          "INSERT INTO NVTX_EVENTS (start, end, eventType, text, domainId) VALUES (0, NULL, 75, 'NCCL', 1);");
  const int64_t pid = 100, gpid = pid << 24, gtid = gpid | pid;
  auto range = [&](int64_t start, int64_t end, const std::string& text, int domain) {
    db.exec(
        fmt::format("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES ({}, {}, "
                    "59, '{}', {}, {})",
                    start, end, text, gtid, domain));
  };
  const char* around[] = {"nccl:all_to_all, op_id = 7", "nccl:alltoall", "nccl:send"};
  for (int i = 0; i < 3; ++i) {
    const int64_t t = 1000 * kUs * (i + 1), corr = 10 + i;
    range(t, t + 100 * kUs, around[i], 0);  // PyTorch's, in the default domain
    range(t + 1 * kUs, t + 2 * kUs, "ncclGroupStart", 1);
    range(t + 3 * kUs, t + 4 * kUs, "ncclSend", 1);
    if (i < 2) range(t + 5 * kUs, t + 6 * kUs, "ncclRecv", 1);
    range(t + 7 * kUs, t + 50 * kUs, "ncclGroupEnd", 1);
    db.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 0, {}, {}, 2, 0)", t + 10 * kUs,
                        t + 20 * kUs, gtid, corr));
    db.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({}, {}, 0, 7, {}, {}, 1, 1)", t + 30 * kUs,
                        t + 80 * kUs, corr, gpid));
  }
  db.exec("COMMIT");
}

TEST(NsysAllToAll, SendRecvKernelsInsidePyTorchsAllToAllRangeAreAllToAll) {
  test::TempDir d;
  const fs::path db = d.path() / "a2a.sqlite";
  write_all_to_all_export(db);
  plugins::LoadResult loaded = plugins::load({db});
  ASSERT_EQ(loaded.trace.ranks.size(), 1u);
  const model::Rank& r = loaded.trace.ranks[0];
  std::vector<model::CollectiveKind> kinds;
  for (const model::Track& t : r.tracks)
    for (const model::Event& e : t.events)
      if (e.cls == model::IntervalClass::Communication) kinds.push_back(e.coll);
  EXPECT_EQ(kinds, (std::vector<model::CollectiveKind>{model::CollectiveKind::AllToAll, model::CollectiveKind::AllToAll,
                                                       model::CollectiveKind::SendRecv}));
  EXPECT_EQ(r.metadata["nsys"]["all_to_all_kernels_named_by_nvtx"].get<int64_t>(), 2);
  EXPECT_EQ(r.metadata["nsys"]["nccl_kernels_described_by_nvtx"].get<int64_t>(), 3);
  // The all-to-all's kernel time, for the collectives table's all_to_all row.
  int64_t all_to_all_ns = 0;
  for (const model::Track& t : r.tracks)
    for (const model::Event& e : t.events)
      if (e.coll == model::CollectiveKind::AllToAll) all_to_all_ns += e.dur_ns;
  EXPECT_EQ(all_to_all_ns, 100 * kUs);
}

}  // namespace
