// The prefetch verdict on real CPU runs of the trainer (2 ranks on this 2-core machine, while other tests
// load it): BACKWARD_PRE is found effective in at least 9 of 10 runs, "none" and "post" never are, a rank
// slowed on purpose is named as the cause, and the rate limiter's hold on forward prefetch is reported.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using nlohmann::json;
using shardscope::test::run;

namespace {

struct Checked {
  int rc = -1;       // check-prefetch's exit code
  json result;       // its JSON
  std::string text;  // its text, for failure messages
};

constexpr int kSteps = 6;  // step 0 warm-up, 5 steady

// Trains 2 ranks with FULL_SHARD and `extra`, then checks. `tiny` widened to 256: a block's backward compute
// (about 10 ms here) then outlasts its all-gather (about 2 ms) by enough that hiding it is possible on a CPU
// whose two cores both ranks' compute and communication threads share.
Checked train_and_check(const fs::path& dir, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {SHARDSCOPE_BIN, "launch", "-n", "2", "--", TRAINER_BIN, "--preset", "tiny", "--dim", "256", "--ffn-dim", "768",
                                   "--seq-len", "128", "--batch-size", "2", "--threads", "1", "--steps", std::to_string(kSteps), "--sharding", "full_shard",
                                   "--trace-dir", dir.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto trained = run(argv);
  EXPECT_EQ(trained.rc, 0) << trained.err;
  Checked c;
  auto j = run({SHARDSCOPE_BIN, "check-prefetch", dir.string(), "--format", "json"});
  c.rc = j.rc;
  c.result = json::parse(j.out, nullptr, false);
  c.text = run({SHARDSCOPE_BIN, "check-prefetch", dir.string()}).out;
  return c;
}

TEST(PrefetchRuns, BackwardPreIsEffectiveInAtLeastNineOfTenRuns) {
  shardscope::test::TempDir d;
  int effective = 0;
  std::string failures;
  for (int i = 0; i < 10; ++i) {
    Checked c = train_and_check(d.path() / std::to_string(i), {"--backward-prefetch", "pre"});
    ASSERT_FALSE(c.result.is_discarded()) << c.text;
    if (c.rc == 0 && c.result["verdict"] == "effective") ++effective;
    else failures += c.text;
    for (const json& rank : c.result["ranks"]) {
      // Step 0 is warm-up: reported, never counted.
      ASSERT_FALSE(rank["steps"].empty());
      EXPECT_EQ(rank["steps"][0]["step"], 0);
      EXPECT_TRUE(rank["steps"][0]["warm_up"].get<bool>());
      EXPECT_EQ(rank["steady_steps_effective"].get<int>() + rank["steady_steps_not_effective"].get<int>(), kSteps - 1);
    }
  }
  EXPECT_GE(effective, 9) << failures;
}

TEST(PrefetchRuns, NoneAndPostAreNeverEffective) {
  shardscope::test::TempDir d;
  for (const char* mode : {"none", "post"})
    for (int i = 0; i < 3; ++i) {
      Checked c = train_and_check(d.path() / (std::string(mode) + std::to_string(i)), {"--backward-prefetch", mode});
      ASSERT_FALSE(c.result.is_discarded()) << c.text;
      EXPECT_EQ(c.rc, 1) << mode << "\n" << c.text;
      for (const json& rank : c.result["ranks"]) {
        EXPECT_EQ(rank["verdict"], "not effective") << mode << "\n" << c.text;
        for (const json& step : rank["steps"]) {
          // Issued after the compute it should hide began, by construction of both modes.
          EXPECT_EQ(step["cause"], "issued late") << mode << "\n" << c.text;
          for (const json& u : step["units"]) EXPECT_LT(u["issue_lead_ns"].get<int64_t>(), 0);
        }
      }
    }
}

TEST(PrefetchRuns, ARankSlowedOnPurposeIsNamedAsTheCause) {
  shardscope::test::TempDir d;
  // Rank 1 sleeps 200 ms before each unit's backward: far longer than a block's backward compute even on a
  // loaded machine, so rank 0's prefetched all-gathers wait for it in the open.
  Checked c = train_and_check(d.path(), {"--backward-prefetch", "pre", "--slow-rank", "1", "--slow-rank-ms", "200"});
  ASSERT_FALSE(c.result.is_discarded()) << c.text;
  EXPECT_EQ(c.rc, 1) << c.text;
  const json& rank0 = c.result["ranks"][0];
  ASSERT_EQ(rank0["rank"], 0);
  EXPECT_EQ(rank0["verdict"], "not effective") << c.text;
  int named = 0, steps_named = 0;
  int64_t late_max = 0;
  for (const json& step : rank0["steps"]) {
    if (step["warm_up"].get<bool>()) continue;
    steps_named += step["cause"] == "late peer";
    for (const json& u : step["units"])
      if (u["cause"] == "late peer") {
        ++named;
        EXPECT_EQ(u["late_peer"], 1);
        late_max = std::max(late_max, u["late_peer_ns"].get<int64_t>());
      }
  }
  EXPECT_GT(named, 0) << c.text;
  EXPECT_GT(late_max, 100'000'000) << c.text;  // about the 200 ms planted
  EXPECT_LT(late_max, 1'000'000'000) << c.text;
  EXPECT_GT(steps_named, (kSteps - 1) / 2) << c.text;  // most steady steps name it
  EXPECT_NE(c.text.find("a late peer: rank 1 arrived"), std::string::npos) << c.text;
}

TEST(PrefetchRuns, TheRateLimiterHoldingForwardPrefetchIsReported) {
  shardscope::test::TempDir d;
  Checked c = train_and_check(d.path(), {"--backward-prefetch", "pre", "--forward-prefetch", "--limit-all-gathers", "1"});
  ASSERT_FALSE(c.result.is_discarded()) << c.text;
  for (const json& rank : c.result["ranks"]) {
    EXPECT_EQ(rank["limit_all_gathers"], 1);
    // Every forward prefetch waits for the unit gathered just before it to be consumed: limit 1.
    EXPECT_GT(rank["forward_throttled"].get<int>(), 0) << c.text;
    EXPECT_LE(rank["forward_throttled"].get<int>(), rank["forward_all_gathers"].get<int>());
  }
  EXPECT_NE(c.text.find("throttled by the rate limiter (limit_all_gathers = 1)"), std::string::npos) << c.text;
}

}  // namespace
