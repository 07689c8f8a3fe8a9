// A trace's own step ranges become its steps: an unmodified PyTorch program traced by injection marks its
// steps with NVTX ranges "step 0" ... "step 5", found by the default pattern; --step-pattern names others,
// and a pattern that is not a regular expression is refused by name. Names of any length are matched in
// linear time with bounded stack (a backtracking matcher overflowed the stack on a 26,000-digit step name).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

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

// A PyTorch profiler trace whose range names are a megabyte long: "step", "iteration" and "ProfilerStep#"
// followed by a million digits, and a 1 MB name that a user pattern's ".*" must walk. None is a step number
// that fits, so the one real step is "iteration 7".
TEST(StepPattern, MegabyteNamesAreMatchedWithoutExhaustingTheStack) {
  shardscope::test::TempDir d;
  const std::string digits(1'000'000, '7');
  const fs::path file = d.path() / "long_names.json";
  {
    std::ofstream out(file);
    out << R"({"traceEvents": [)";
    int ts = 0;
    for (const std::string& name : {"step" + digits, "iteration" + digits, "ProfilerStep#" + digits,
                                    std::string(1'000'000, 'x') + "step 3", std::string("iteration 7")}) {
      out << R"({"ph": "X", "cat": "user_annotation", "name": ")" << name << R"(", "pid": 1, "tid": 1, "ts": )" << ts
          << R"(, "dur": 5},)";
      ts += 10;
    }
    out << R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 41, "dur": 2, "args": {"stream": 7}}]})";
  }
  auto r = run({SHARDSCOPE_BIN, "report", file.string(), "--format", "json"});
  ASSERT_EQ(r.rc, 0) << r.err.substr(0, 500);
  const auto steps = nlohmann::json::parse(r.out)["ranks"][0]["steps"];
  // The three digit names match the default pattern but number no step that fits: numbered by position.
  ASSERT_EQ(steps.size(), 4u) << r.out.substr(0, 2000);
  auto user = run({SHARDSCOPE_BIN, "report", file.string(), "--format", "json", "--step-pattern", ".*step (\\d+)"});
  ASSERT_EQ(user.rc, 0) << user.err.substr(0, 500);
  const auto user_steps = nlohmann::json::parse(user.out)["ranks"][0]["steps"];
  ASSERT_EQ(user_steps.size(), 1u);
  EXPECT_EQ(user_steps[0]["step"], 3);
  auto prefetch = run({SHARDSCOPE_BIN, "check-prefetch", file.string()});
  EXPECT_GE(prefetch.rc, 0);
  EXPECT_LE(prefetch.rc, 2) << "ended by a signal: " << prefetch.rc;
}

}  // namespace
