// Bad configurations exit 2 with one clear line; a lost rank makes the others stop, naming it.
#include <gtest/gtest.h>

#include "tests/training/ranks.h"
#include "tracer/format/reader.h"

namespace shardscope::test {
namespace {

void expect_rejected(int n, const std::vector<std::string>& args, const std::string& message) {
  TempDir dir;
  auto ranks = run_ranks(n, args, dir.path());
  for (auto& r : ranks) {
    EXPECT_EQ(r.rc, 2) << r.stderr_text();
    EXPECT_NE(r.stderr_text().find(message), std::string::npos) << r.stderr_text();
    EXPECT_EQ(r.stderr_text().find("terminate called"), std::string::npos) << r.stderr_text();
  }
}

TEST(BadConfig, RejectedWithOneClearMessage) {
  expect_rejected(1, {"--frobnicate"}, "--frobnicate");
  expect_rejected(1, {"--sharding", "zero4"}, "unknown --sharding 'zero4'");
  expect_rejected(2, {"--sharding", "hybrid_shard"}, "hybrid_shard needs --ranks-per-node");
  expect_rejected(2, {"--sharding", "hybrid_shard", "--ranks-per-node", "3"}, "dividing WORLD_SIZE=2 (got 3)");
  expect_rejected(1, {"--data", "/nonexistent/corpus.txt"}, "--data /nonexistent/corpus.txt: cannot open the file");
  expect_rejected(1, {"--cpu-offload"}, "--cpu-offload moves sharded state from a GPU to the host; it needs --device cuda");
  setenv("SHARDSCOPE_TRAIN_OFFLOAD_ON_CPU", "1", 1);  // past the GPU check, to the strategy check
  expect_rejected(1, {"--cpu-offload", "--sharding", "zero1"}, "--cpu-offload offloads sharded state: use --sharding shard_grad_op, full_shard or hybrid_shard (got zero1)");
  unsetenv("SHARDSCOPE_TRAIN_OFFLOAD_ON_CPU");
  expect_rejected(1, {"--dim", "100", "--heads", "3"}, "--dim must be a multiple of --heads");
  expect_rejected(1, {"--device", "cuda"}, "--device cuda: no");  // no device here (or no NCCL in the build)
}

TEST(BadConfig, RendezvousThatNeverCompletesTimesOut) {
  TempDir dir;
  auto ranks = start_ranks(1, {"--rendezvous-timeout", "2"}, dir.path(), /*world=*/2);  // rank 1 never comes
  wait_ranks(ranks, std::chrono::seconds(60));
  EXPECT_EQ(ranks[0].rc, 2);
  EXPECT_NE(ranks[0].stderr_text().find("did not complete within 2 s"), std::string::npos) << ranks[0].stderr_text();
}

TEST(LostRank, OthersExitNamingItAndEveryTraceLoads) {
  TempDir dir;
  auto ranks = start_ranks(3, {"--preset", "tiny", "--steps", "100000", "--batch-size", "1", "--sharding", "full_shard",
                               "--trace-dir", dir.path().string()},
                           dir.path());
  // Let them train a few steps, then kill rank 1 without warning.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (ranks[0].stdout_text().find("step 3 ") == std::string::npos && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_NE(ranks[0].stdout_text().find("step 3 "), std::string::npos) << ranks[0].stderr_text();
  kill(ranks[1].pid, SIGKILL);
  auto killed_at = std::chrono::steady_clock::now();
  wait_ranks(ranks, std::chrono::seconds(60));
  EXPECT_LT(std::chrono::steady_clock::now() - killed_at, std::chrono::seconds(60));
  for (int r : {0, 2}) {
    EXPECT_NE(ranks[size_t(r)].rc, 0) << "rank " << r;
    EXPECT_NE(ranks[size_t(r)].rc, -1) << "rank " << r << " had to be killed";
    EXPECT_NE(ranks[size_t(r)].stderr_text().find("lost rank 1"), std::string::npos) << ranks[size_t(r)].stderr_text();
  }
  for (int r = 0; r < 3; ++r) {
    auto f = trace::read_trace(dir.path() / ("trace.rank" + std::to_string(r) + ".json.gz"));
    EXPECT_GT(f.events.size(), 10u) << "rank " << r;
  }
}

}  // namespace
}  // namespace shardscope::test
