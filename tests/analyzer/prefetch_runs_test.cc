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
  // it is in the open and at least 200 ms long by construction, however loaded the machine.
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
  EXPECT_GE(late_max, 200'000'000) << c.text;          // at least the 200 ms planted
  EXPECT_GT(steps_named, (kSteps - 1) / 2) << c.text;  // most steady steps name it
  EXPECT_NE(c.text.find("a late peer: rank 1 arrived"), std::string::npos) << c.text;
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
