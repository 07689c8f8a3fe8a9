// The analyzer on the real trainer's traces: two CPU ranks of shardscope-train with BACKWARD_PRE and with no
// prefetch. `report` and `check-prefetch` read them; "none" fails the gate with "issued late" (its lead is
// negative by construction), "pre" issues every backward all-gather in prefetch order.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using shardscope::test::run;

namespace {

// Runs 2 ranks of the trainer (tiny) with the torchrun variables, tracing into dir; true when all exit 0.
bool train_with(const fs::path& dir, const std::vector<std::string>& extra, int port) {
  std::vector<pid_t> pids;
  for (int r = 0; r < 2; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", "2", 1);
      setenv("LOCAL_WORLD_SIZE", "2", 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      std::vector<std::string> args = {TRAINER_BIN, "--preset", "tiny",        "--batch-size", "2",
                                       "--threads", "1",        "--trace-dir", dir.string()};
      args.insert(args.end(), extra.begin(), extra.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(TRAINER_BIN, argv.data());
      _exit(127);
    }
    pids.push_back(pid);
  }
  bool ok = true;
  for (pid_t p : pids) {
    int status = 0;
    waitpid(p, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

// Three steps of FULL_SHARD with the given backward prefetch.
bool train(const fs::path& dir, const std::string& prefetch, int port) {
  return train_with(dir, {"--steps", "3", "--sharding", "full_shard", "--backward-prefetch", prefetch}, port);
}

TEST(TrainerTraces, ReportAndPrefetchGate) {
  shardscope::test::TempDir d;
  int port = 24000 + int(getpid() % 2000);
  ASSERT_TRUE(train(d.path() / "pre", "pre", port));
  ASSERT_TRUE(train(d.path() / "none", "none", port + 1));

  auto report = run({SHARDSCOPE_BIN, "report", (d.path() / "pre").string(), "--format", "json"});
  ASSERT_EQ(report.rc, 0) << report.err;
  auto j = nlohmann::json::parse(report.out);
  ASSERT_EQ(j["ranks"].size(), 2u);
  for (const auto& rank : j["ranks"]) {
    EXPECT_EQ(rank["format"], "shardscope");
    EXPECT_EQ(rank["steps"].size(), 3u);
    EXPECT_FALSE(rank["whole_trace"].is_null());
    EXPECT_EQ(rank["prefetch"]["configured"], "pre");
    for (const auto& step : rank["prefetch"]["steps"]) {
      EXPECT_EQ(step["reason"].get<std::string>().find("issued late"), std::string::npos) << step["reason"];
      for (const auto& u : step["units"]) EXPECT_GT(u["issue_lead_ns"].get<int64_t>(), 0);
    }
    EXPECT_FALSE(rank["memory"]["departs_most"].is_null());
  }

  auto none = run({SHARDSCOPE_BIN, "check-prefetch", (d.path() / "none").string()});
  EXPECT_EQ(none.rc, 1) << none.out << none.err;
  EXPECT_NE(none.out.find("issued late"), std::string::npos) << none.out;
}

// Every model-state counter of the trainer equals the ZeRO model's prediction exactly, for every stage, in
// both dtypes, and with CPU offload (the host standing in for the device; see the trainer's tests).
TEST(TrainerTraces, MemoryModelMatchesEveryStageExactly) {
  shardscope::test::TempDir d;
  int port = 26000 + int(getpid() % 2000) * 2;
  struct Case {
    std::string name;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {{"no_shard", {"--sharding", "no_shard"}},
                                   {"zero1_bf16", {"--sharding", "zero1", "--param-dtype", "bf16"}},
                                   {"shard_grad_op", {"--sharding", "shard_grad_op"}},
                                   {"full_shard_bf16", {"--sharding", "full_shard", "--param-dtype", "bf16"}},
                                   {"full_shard_offload", {"--sharding", "full_shard", "--cpu-offload"}}};
  setenv("SHARDSCOPE_TRAIN_OFFLOAD_ON_CPU", "1", 1);
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--steps", "2"});
    ASSERT_TRUE(train_with(d.path() / c.name, args, port++)) << c.name;
    auto report = run({SHARDSCOPE_BIN, "report", (d.path() / c.name).string(), "--format", "json"});
    ASSERT_EQ(report.rc, 0) << report.err;
    auto j = nlohmann::json::parse(report.out);
    for (const auto& rank : j["ranks"]) {
      int checked = 0;
      for (const auto& row : rank["memory"]["rows"]) {
        const std::string cat = row["category"];
        if (cat == "activations" || cat == "allocator_total" || cat == "rest") continue;  // not model states
        ASSERT_TRUE(row["measured_bytes"].is_number()) << c.name << " " << cat;
        ASSERT_TRUE(row["predicted_bytes"].is_number()) << c.name << " " << cat;
        EXPECT_EQ(row["measured_bytes"].get<double>(), row["predicted_bytes"].get<double>()) << c.name << " " << cat;
        ++checked;
      }
      EXPECT_EQ(checked, c.name == "full_shard_offload" ? 5 : 4) << c.name;
    }
  }
  unsetenv("SHARDSCOPE_TRAIN_OFFLOAD_ON_CPU");
}

}  // namespace
