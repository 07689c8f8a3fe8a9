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

// Runs `world` ranks of the trainer with the torchrun variables; true when all exit 0.
bool train(const fs::path& dir, const std::string& prefetch, int port) {
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
      std::string trace_dir = dir.string();
      execl(TRAINER_BIN, TRAINER_BIN, "--preset", "tiny", "--steps", "3", "--batch-size", "2", "--sharding", "full_shard", "--backward-prefetch",
            prefetch.c_str(), "--threads", "1", "--trace-dir", trace_dir.c_str(), static_cast<char*>(nullptr));
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

}  // namespace
