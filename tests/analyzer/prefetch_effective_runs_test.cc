// BACKWARD_PRE on real CPU runs of the trainer (2 ranks on a 2-core machine), judged by what each trace shows
// rather than by how the machine's load happened to fall. The prefetch itself, each backward all-gather
// issued before the compute it should hide (a positive issue lead), is program order and holds at any load.
// Whether the all-gather then runs under that compute depends on the communication thread getting a core:
// under load it may not, and the check then names a cause of execution (started late, no compute under it,
// longer than the compute, queued behind a reduce-scatter, a late peer), never "issued late", the cause a
// missing prefetch gives (prefetch_runs_test.cc plants that with none and post). So the test holds at any
// load, and how many runs were effective is printed, not asserted.
#include <gtest/gtest.h>

#include <set>

#include "tests/analyzer/train_and_check.h"

using nlohmann::json;
using shardscope::test::Checked;
using shardscope::test::kSteps;
using shardscope::test::train_and_check;

namespace {

TEST(PrefetchRuns, BackwardPreIsIssuedInPrefetchOrderAndAnyExposureIsAnExecutionCause) {
  // The causes as check-prefetch names them in JSON (analyzer/report/prefetch_render.cc; a queued all-gather is
  // "behind reduce-scatter").
  const std::set<std::string> execution = {"started late", "no compute under it", "longer than compute",
                                           "behind reduce-scatter", "late peer"};
  shardscope::test::TempDir d;
  int effective = 0;
  constexpr int kRuns = 4;
  for (int i = 0; i < kRuns; ++i) {
    Checked c = train_and_check(d.path() / std::to_string(i), {"--backward-prefetch", "pre"});
    ASSERT_FALSE(c.result.is_discarded()) << c.text;
    ASSERT_TRUE(c.rc == 0 || c.rc == 1) << c.text;
    effective += c.result["verdict"] == "effective";
    for (const json& rank : c.result["ranks"]) {
      // Step 0 is warm-up: reported, never counted.
      ASSERT_FALSE(rank["steps"].empty());
      EXPECT_TRUE(rank["steps"][0]["warm_up"].get<bool>());
      EXPECT_EQ(rank["steady_steps_effective"].get<int>() + rank["steady_steps_not_effective"].get<int>(), kSteps - 1)
          << c.text;
      for (const json& step : rank["steps"]) {
        ASSERT_EQ(step["units"].size(), 3u) << c.text;
        for (const json& u : step["units"]) {
          EXPECT_GT(u["issue_lead_ns"].get<int64_t>(), 0)
              << "run " << i << ", step " << step["step"] << ", unit " << u["unit"] << "\n"
              << c.text;
          if (!u["cause"].is_null())
            EXPECT_TRUE(execution.count(u["cause"].get<std::string>())) << u["cause"] << "\n" << c.text;
        }
        if (step["verdict"] == "not effective")
          EXPECT_TRUE(execution.count(step["cause"].get<std::string>())) << step["cause"] << "\n" << c.text;
      }
    }
  }
  std::printf("BACKWARD_PRE effective in %d of %d runs on this machine now\n", effective, kRuns);
}

}  // namespace
