// `shardscope check-prefetch` on a PyTorch FSDP1 trace: it finds the units and says they were inferred from
// the order of FSDP1's hooks, not named by the trace.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/plugins/fsdp1_trace.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

namespace shardscope::test {
namespace {

TEST(CheckPrefetchFsdp1, SaysUnitsAreInferredFromOrder) {
  TempDir d;
  auto path = d.path() / "fsdp1.json";
  std::ofstream(path) << Fsdp1Trace().build({});
  RunResult text = run({SHARDSCOPE_BIN, "check-prefetch", path.string()});
  EXPECT_EQ(text.rc, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("units: inferred from order, not named"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("verdict: effective"), std::string::npos) << text.out;

  RunResult j = run({SHARDSCOPE_BIN, "check-prefetch", path.string(), "--format", "json"});
  ASSERT_EQ(j.rc, 0) << j.err;
  nlohmann::json rank = nlohmann::json::parse(j.out)["ranks"][0];
  EXPECT_EQ(rank["unit_identity"].get<std::string>().rfind("inferred from order", 0), 0u);
  ASSERT_EQ(rank["steps"][0]["units"].size(), 2u);
  EXPECT_EQ(rank["steps"][0]["units"][0]["next_unit"], 2);
}

}  // namespace
}  // namespace shardscope::test
