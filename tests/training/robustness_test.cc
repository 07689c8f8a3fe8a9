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
  expect_rejected(1, {"--cpu-offload"},
                  "--cpu-offload moves sharded state from a GPU to the host; it needs --device cuda");
  setenv("SHARDSCOPE_TRAIN_OFFLOAD_ON_CPU", "1", 1);  // past the GPU check, to the strategy check
  expect_rejected(
      1, {"--cpu-offload", "--sharding", "zero1"},
      "--cpu-offload offloads sharded state: use --sharding shard_grad_op, full_shard or hybrid_shard (got zero1)");
  unsetenv("SHARDSCOPE_TRAIN_OFFLOAD_ON_CPU");
  expect_rejected(1, {"--dim", "100", "--heads", "3"}, "--dim must be a multiple of --heads");
  expect_rejected(1, {"--device", "cuda"}, "--device cuda: no");  // no device here (or no NCCL in the build)
}

// One plain sentence per numeric flag out of range, never CLI11's bounds of a double.
TEST(BadConfig, NumericFlagsOutOfRangeSayWhatIsAllowed) {
  expect_rejected(1, {"--steps", "0"}, "--steps must be at least 1 (got 0)");
  expect_rejected(1, {"--batch-size", "-2"}, "--batch-size must be at least 1 (got -2)");
  expect_rejected(1, {"--lr", "0"}, "--lr must be greater than 0 (got 0)");
  expect_rejected(1, {"--threads", "0"}, "--threads must be at least 1 (got 0)");
  expect_rejected(1, {"--slow-rank-ms", "70000"}, "--slow-rank-ms must be at most 60000 (got 70000)");
  TempDir dir;
  auto ranks = run_ranks(1, {"--steps", "0"}, dir.path());
  EXPECT_LT(ranks[0].stderr_text().size(), 200u) << ranks[0].stderr_text();
}

TEST(Resume, AMissingOrEmptyCheckpointFolderIsAnError) {
  TempDir dir;
  const std::string missing = (dir.path() / "no-such-ckpt").string();
  expect_rejected(1, {"--resume", "--checkpoint-dir", missing}, "checkpoint folder " + missing + " does not exist");
  std::filesystem::create_directories(dir.path() / "empty");
  const std::string empty = (dir.path() / "empty").string();
  expect_rejected(1, {"--resume", "--checkpoint-dir", empty}, empty + " holds no complete checkpoint");
}

// A checkpoint from a real run; a resume with a changed layout is refused naming each key with both values,
// and a changed schedule or seed is accepted with a warning naming each.
TEST(Resume, NamesEachChangedSettingRefusingLayoutChanges) {
  TempDir dir;
  const std::string ckpt = (dir.path() / "ckpt").string();
  auto first = run_ranks(1, {"--preset", "tiny", "--steps", "2", "--checkpoint-dir", ckpt}, dir.path());
  ASSERT_EQ(first[0].rc, 0) << first[0].stderr_text();

  auto layout = run_ranks(1,
                          {"--preset", "tiny", "--steps", "2", "--resume", "--checkpoint-dir", ckpt, "--sharding",
                           "shard_grad_op", "--param-dtype", "bf16"},
                          dir.path());
  EXPECT_EQ(layout[0].rc, 2);
  const std::string err = layout[0].stderr_text();
  EXPECT_NE(err.find("--sharding: checkpoint full_shard, flags shard_grad_op"), std::string::npos) << err;
  EXPECT_NE(err.find("--param-dtype: checkpoint fp32, flags bf16"), std::string::npos) << err;
  EXPECT_LT(err.size(), 600u) << err;  // no dump of both configurations

  auto soft = run_ranks(
      1, {"--preset", "tiny", "--steps", "4", "--lr", "0.001", "--seed", "7", "--resume", "--checkpoint-dir", ckpt},
      dir.path());
  EXPECT_EQ(soft[0].rc, 0) << soft[0].stderr_text();
  const std::string warn = soft[0].stderr_text();
  EXPECT_NE(warn.find("warning: resuming"), std::string::npos) << warn;
  EXPECT_NE(warn.find("--steps: checkpoint 2, flags 4"), std::string::npos) << warn;
  EXPECT_NE(warn.find("--lr: checkpoint 0.003, flags 0.001"), std::string::npos) << warn;
  EXPECT_NE(warn.find("--seed: checkpoint 0, flags 7"), std::string::npos) << warn;
  EXPECT_NE(soft[0].stdout_text().find("resuming at step 2"), std::string::npos) << soft[0].stdout_text();
}

// --preset 8b needs about 64 GB per rank on two ranks (fp32 master, moments and gradients, halved): refused
// before any allocation rather than failing in a collective half a minute later.
TEST(BadConfig, ARunThatCannotFitInMemoryIsRefusedAtOnceWithTheNumbers) {
  std::ifstream meminfo("/proc/meminfo");
  double available_kb = 0;
  for (std::string key; meminfo >> key;) {
    double kb = 0;
    meminfo >> kb;
    if (key == "MemAvailable:") available_kb = kb;
  }
  if (available_kb > 100e6) GTEST_SKIP() << "this machine could hold the run";
  TempDir dir;
  // Refused before anything is allocated: the line with the numbers says so (a run that went ahead would
  // fail otherwise, or be killed), not a time bound that a loaded machine would break.
  auto ranks = run_ranks(2, {"--preset", "8b", "--steps", "1"}, dir.path());
  for (auto& r : ranks) {
    const std::string err = r.stderr_text();
    EXPECT_EQ(r.rc, 2) << err;
    EXPECT_NE(err.find("this run needs about"), std::string::npos) << err;
    EXPECT_NE(err.find("per rank (model states"), std::string::npos) << err;
    EXPECT_NE(err.find("and 2 rank(s) on this machine, but only"), std::string::npos) << err;
  }
}

TEST(BadConfig, RendezvousThatNeverCompletesTimesOut) {
  TempDir dir;
  auto ranks = start_ranks(1, {"--rendezvous-timeout", "2"}, dir.path(), /*world=*/2);  // rank 1 never comes
  wait_ranks(ranks, std::chrono::seconds(60));
  EXPECT_EQ(ranks[0].rc, 2);
  EXPECT_NE(ranks[0].stderr_text().find("did not complete within 2 s"), std::string::npos) << ranks[0].stderr_text();
}

// Ranks started with different flags stop at once, every one naming the first differing setting with both
// values, instead of meeting in collectives that never match.
void expect_mismatch(const std::vector<std::vector<std::string>>& extra, const std::string& message) {
  TempDir dir;
  // Stopped before any collective: exit 2 and the setting named (ranks that met in collectives would fail
  // with 3, or be killed by wait_ranks with -1).
  auto ranks = start_ranks(2, {"--preset", "tiny", "--batch-size", "1"}, dir.path(), -1, extra);
  wait_ranks(ranks, std::chrono::seconds(60));
  for (auto& r : ranks) {
    const std::string err = r.stderr_text();
    EXPECT_EQ(r.rc, 2) << err;
    EXPECT_NE(err.find(message), std::string::npos) << err;
    EXPECT_LT(err.size(), 300u) << err;
  }
}

TEST(RankConfig, RanksWithDifferentFlagsNameTheFirstDifference) {
  expect_mismatch({{"--steps", "10"}, {"--steps", "12"}},
                  "rank 1's configuration differs from rank 0's: --steps 10 vs 12");
  expect_mismatch({{"--lr", "0.003"}, {"--lr", "0.001"}},
                  "rank 1's configuration differs from rank 0's: --lr 0.003 vs 0.001");
  expect_mismatch({{"--sharding", "full_shard", "--steps", "3"}, {"--sharding", "shard_grad_op", "--steps", "4"}},
                  "rank 1's configuration differs from rank 0's: --sharding full_shard vs shard_grad_op");
  expect_mismatch({{"--backward-prefetch", "pre"}, {"--backward-prefetch", "post"}},
                  "rank 1's configuration differs from rank 0's: --backward-prefetch pre vs post");
  expect_mismatch({{}, {"--layers", "2"}}, "rank 1's configuration differs from rank 0's: --layers 4 vs 2");
  expect_mismatch({{}, {"--checkpoint-dir", "ckpt"}},
                  "rank 1's configuration differs from rank 0's: --checkpoint-dir (not set) vs set");
}

TEST(RankConfig, RanksWithEqualFlagsTrain) {
  TempDir dir;
  // Paths may differ between ranks (each machine its own log), so the logs' names do not count.
  auto ranks = start_ranks(2, {"--preset", "tiny", "--batch-size", "1", "--steps", "2"}, dir.path(), -1,
                           {{"--log-json", (dir.path() / "a{rank}.jsonl").string()},
                            {"--log-json", (dir.path() / "b{rank}.jsonl").string()}});
  wait_ranks(ranks, std::chrono::seconds(120));
  for (auto& r : ranks) EXPECT_EQ(r.rc, 0) << r.stderr_text();
  EXPECT_NE(ranks[0].stdout_text().find("step 1 "), std::string::npos) << ranks[0].stdout_text();
  EXPECT_EQ(read_log(dir.path() / "b1.jsonl").size(), 2u);
}

TEST(LostRank, OthersExitNamingItAndEveryTraceLoads) {
  TempDir dir;
  auto ranks = start_ranks(3,
                           {"--preset", "tiny", "--steps", "100000", "--batch-size", "1", "--sharding", "full_shard",
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
