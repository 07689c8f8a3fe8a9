// The prefetch verdict on real CPU runs of the trainer (2 ranks on a 2-core machine): "none" and "post" are
// never effective (their all-gathers are issued late by construction), a rank made late on purpose (it waits
// for the other rank's compute, then sleeps) is named as the cause, and the rate limiter's hold on forward prefetch is reported.
// BACKWARD_PRE itself is judged by what its traces show in prefetch_effective_runs_test.cc.
#include <gtest/gtest.h>

#include "tests/analyzer/train_and_check.h"

using nlohmann::json;
using shardscope::test::Checked;
using shardscope::test::kSteps;
using shardscope::test::train_and_check;

namespace {

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
  // Rank 1 issues each backward prefetch only after rank 0 has finished the backward compute it was to hide
  // behind (the trainer waits on rank 0's word through the run's store), then sleeps 200 ms: rank 0's wait for
  // it is in the open and at least 200 ms long by construction, however loaded the machine. How much of each
  // all-gather that leaves hidden is the load's (a loaded host stretches the compute it hides behind: under
  // four copies of this test and two busy loops, 3 of 5 steps hid over half of it), so each step's verdict is
  // held to its own hidden share, and the late peer to what was planted.
  Checked c = train_and_check(d.path(), {"--backward-prefetch", "pre", "--slow-rank", "1", "--slow-rank-ms", "200"});
  ASSERT_FALSE(c.result.is_discarded()) << c.text;
  const json& rank0 = c.result["ranks"][0];
  ASSERT_EQ(rank0["rank"], 0);
  int units = 0, not_effective = 0;
  for (const json& step : rank0["steps"]) {
    if (step["warm_up"].get<bool>()) continue;
    for (const json& u : step["units"]) {
      ++units;
      EXPECT_EQ(u["late_peer"], 1) << c.text;
      EXPECT_GE(u["late_peer_ns"].get<int64_t>(), 200'000'000) << c.text;  // at least the 200 ms planted
      EXPECT_GE(u["exposed_wait_ns"].get<int64_t>(), 200'000'000) << c.text;
    }
    if (step["verdict"] == "effective") {
      EXPECT_GE(step["hidden_share"].get<double>(), 0.5) << c.text;
    } else {
      ++not_effective;
      EXPECT_EQ(step["cause"], "late peer") << c.text;  // named, not a cause of rank 0's own
    }
  }
  EXPECT_EQ(units, 3 * (kSteps - 1)) << c.text;  // units 4, 3 and 2 hide the next one's in each steady step
  if (not_effective > 0) EXPECT_NE(c.text.find("a late peer: rank 1 arrived"), std::string::npos) << c.text;
  if (not_effective > (kSteps - 1) / 2) {
    EXPECT_EQ(c.rc, 1) << c.text;
    EXPECT_EQ(rank0["verdict"], "not effective") << c.text;
  }
}

TEST(PrefetchRuns, TheRateLimiterHoldingForwardPrefetchIsReported) {
  shardscope::test::TempDir d;
  Checked c =
      train_and_check(d.path(), {"--backward-prefetch", "pre", "--forward-prefetch", "--limit-all-gathers", "1"});
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
