// The prefetch verdict on the real 2-rank NCCL traces from an H100 (tests/data/h100_nccl2, how they were
// made and what their timelines show: tests/data/README.md): our trainer with `pre` and `none`, PyTorch
// FSDP1 with BACKWARD_PRE and None, PyTorch FSDP2.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/support/run.h"

namespace fs = std::filesystem;
using nlohmann::json;
using shardscope::test::run;

namespace {

struct Case {
  const char* dir;
  const char* verdict;  // the run's, on every rank
  const char* cause;    // every steady step's when not effective, else nullptr
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.dir; }

class H100Verdicts : public ::testing::TestWithParam<Case> {};

TEST_P(H100Verdicts, MatchWhatTheTimelineShows) {
  const Case& c = GetParam();
  fs::path dir = fs::path(SHARDSCOPE_DATA_DIR) / "h100_nccl2" / c.dir;
  ASSERT_TRUE(fs::exists(dir)) << dir << " is missing: tests/data holds it";
  auto r = run({SHARDSCOPE_BIN, "check-prefetch", dir.string(), "--format", "json"});
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  auto text = run({SHARDSCOPE_BIN, "check-prefetch", dir.string()}).out;
  EXPECT_EQ(r.rc, std::string(c.verdict) == "effective" ? 0 : 1) << text;
  ASSERT_EQ(j["ranks"].size(), 2u);
  for (const json& rank : j["ranks"]) {
    EXPECT_EQ(rank["verdict"], c.verdict) << text;
    size_t pairs = 0;
    for (const json& step : rank["steps"]) {
      if (c.cause && !step["warm_up"].get<bool>()) {
        EXPECT_EQ(step["cause"], c.cause) << text;
      }
      if (!c.cause) {
        EXPECT_EQ(step["verdict"], "effective") << text;
      }
      for (const json& u : step["units"]) {
        ++pairs;
        // Backward runs the units downwards, one step at a time: no pair reaches into another step.
        EXPECT_EQ(u["next_unit"].get<int>(), u["unit"].get<int>() - 1) << text;
        const json& ev = u["evidence"];
        EXPECT_LE(ev["backward_compute"]["start_ns"].get<int64_t>(),
                  ev["next_backward_compute"]["start_ns"].get<int64_t>());
      }
    }
    EXPECT_GT(pairs, 0u) << text;
  }
}

INSTANTIATE_TEST_SUITE_P(Runs, H100Verdicts,
                         ::testing::Values(Case{"shardscope_train_pre", "effective", nullptr},
                                           Case{"shardscope_train_none", "not effective", "issued late"},
                                           Case{"pytorch_fsdp1_backward_pre", "effective", nullptr},
                                           Case{"pytorch_fsdp1_backward_none", "not effective", "issued late"},
                                           Case{"pytorch_fsdp2", "effective", nullptr}),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.dir); });

}  // namespace
