// A trace's own step ranges become its steps: an unmodified PyTorch program traced by injection marks its
// steps with NVTX ranges "step 0" ... "step 5", found by the default pattern; --step-pattern names others,
// and a pattern that is not a regular expression is refused by name.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/support/run.h"

namespace fs = std::filesystem;
using shardscope::test::run;

namespace {

fs::path injected() { return fs::path(SHARDSCOPE_DATA_DIR) / "h100_shardscope" / "injected_fsdp2.rank0.json.gz"; }

TEST(StepPattern, AnInjectedProgramsNvtxStepsAreFound) {
  ASSERT_TRUE(fs::exists(injected())) << injected() << " is missing: tests/data holds it";
  auto r = run({SHARDSCOPE_BIN, "report", injected().string(), "--format", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& steps = j["ranks"][0]["steps"];
  ASSERT_EQ(steps.size(), 6u) << r.out.substr(0, 2000);
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i]["step"], int(i));
    EXPECT_GT(steps[i]["step_ns"].get<int64_t>(), 0);
  }
}

TEST(StepPattern, APatternThatMatchesNothingLeavesNoSteps) {
  ASSERT_TRUE(fs::exists(injected())) << injected() << " is missing: tests/data holds it";
  auto r = run({SHARDSCOPE_BIN, "report", injected().string(), "--format", "json", "--step-pattern", "^epoch (\\d+)$"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["ranks"][0]["steps"].empty());
}

TEST(StepPattern, ABadPatternIsRefusedByName) {
  auto r = run({SHARDSCOPE_BIN, "report", "/nonexistent.json", "--step-pattern", "step (\\d+"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--step-pattern"), std::string::npos) << r.err;
}

}  // namespace
