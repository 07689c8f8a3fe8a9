// diff's text: a change that rounds to zero prints as +0.000 (+0.0%), never -0.000 (-0.0%).
#include <gtest/gtest.h>

#include "analyzer/report/diff_render.h"

namespace shardscope::report {
namespace {

TEST(DiffRender, AChangeThatRoundsToZeroHasNoSign) {
  analysis::RunDiff d;
  analysis::RankDiff& r = d.ranks.emplace_back();
  r.rows.push_back({"step time ms", 100.0, 99.99999});
  r.rows.push_back({"overlap %", -0.00004, -0.00001});
  const std::string text = diff_text(d, "a", "b");
  EXPECT_EQ(text.find("-0.0"), std::string::npos) << text;
  EXPECT_NE(text.find("+0.000 (+0.0%)"), std::string::npos) << text;
  EXPECT_NE(text.find(" 0.000 "), std::string::npos) << text;  // -0.00004 shown as 0.000
}

}  // namespace
}  // namespace shardscope::report
