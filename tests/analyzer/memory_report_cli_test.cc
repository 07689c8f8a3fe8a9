// `shardscope report` shows the predicted activations (from run_config's model shape) beside the measured
// ones in every format, and says how it predicted them.
#include <gtest/gtest.h>

#include <regex>

#include <nlohmann/json.hpp>

#include "tests/analyzer/trainer_trace.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

using nlohmann::json;
using shardscope::test::run;

namespace {

TEST(MemoryReportCli, ActivationsPredictedBesideMeasured) {
  shardscope::test::TempDir d;
  shardscope::test::TrainerTraceOptions o;
  // s = 64, b = 2, h = 128, a = 4, L = 4, bf16: 4 × 64·2·128·(34 + 5·4·64/128) = 2,883,584 bytes.
  o.run_config_extra = {{"model", {{"layers", 4}, {"dim", 128}, {"heads", 4}, {"seq_len", 64}}}, {"batch_size", 2}};
  o.activations_bytes = 2'500'000;
  auto path = d.path() / "trace.rank0.json";
  shardscope::test::write_trainer_trace(path, o);

  auto j = run({SHARDSCOPE_BIN, "report", path.string(), "--format", "json"});
  ASSERT_EQ(j.rc, 0) << j.err;
  const json report = json::parse(j.out);
  const json& mem = report["ranks"][0]["memory"];
  bool found = false;
  for (const json& row : mem["rows"])
    if (row["category"] == "activations") {
      found = true;
      EXPECT_EQ(row["measured_bytes"], 2'500'000.0);
      EXPECT_EQ(row["predicted_bytes"], 2'883'584.0);
    }
  EXPECT_TRUE(found);
  EXPECT_NE(mem["activations_model"].get<std::string>().find("Korthikanti"), std::string::npos);

  auto text = run({SHARDSCOPE_BIN, "report", path.string()});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_TRUE(std::regex_search(text.out, std::regex("activations +2\\.500 +2\\.884"))) << text.out;  // measured, predicted MB
  EXPECT_NE(text.out.find("activations: predicted by Korthikanti et al. 2022 without recomputation"), std::string::npos) << text.out;

  auto html = run({SHARDSCOPE_BIN, "report", path.string(), "--format", "html"});
  ASSERT_EQ(html.rc, 0) << html.err;
  EXPECT_NE(html.out.find("predicted 2.884 MB"), std::string::npos);
  EXPECT_NE(html.out.find("Activations: predicted by Korthikanti"), std::string::npos);
}

}  // namespace
