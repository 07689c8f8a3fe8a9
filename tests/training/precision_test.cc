// Mixed precision: bf16 parameters for compute and bf16 gradient reduction, fp32 master weights.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/training/ranks.h"

namespace shardscope::test {
namespace {

TEST(MixedPrecision, Bf16TrainsCloseToFp32WithFp32Masters) {
  TempDir a, b;
  std::vector<std::string> args = {"--preset", "tiny", "--steps", "4", "--batch-size", "1", "--sharding", "full_shard"};
  auto fp32 = args, bf16 = args;
  fp32.insert(fp32.end(), {"--log-json", (a.path() / "log").string()});
  bf16.insert(bf16.end(),
              {"--param-dtype", "bf16", "--reduce-dtype", "bf16", "--log-json", (b.path() / "log.{rank}").string()});
  for (auto& r : run_ranks(2, fp32, a.path())) ASSERT_EQ(r.rc, 0) << r.stderr_text();
  for (auto& r : run_ranks(2, bf16, b.path())) ASSERT_EQ(r.rc, 0) << r.stderr_text();
  auto want = read_log(a.path() / "log"), got = read_log(b.path() / "log.0");
  ASSERT_EQ(got.size(), want.size());
  bool differs = false;
  for (size_t s = 0; s < got.size(); ++s) {
    double x = got[s]["loss"], y = want[s]["loss"];
    EXPECT_LT(std::fabs(x - y) / y, 0.02) << "step " << s;  // bf16 has 8 bits of mantissa
    differs |= x != y;
  }
  EXPECT_TRUE(differs) << "bf16 gave bit-identical losses: was it really used?";
  // Masters, gradients and moments stay fp32 shards; the gathered parameters are bf16 (2 bytes).
  const int64_t root = 256 * 128 * 2 + 128, block = 128 * 2 + 4 * 128 * 128 + 3 * 128 * 344;  // both even: no padding
  const auto& end = got.back()["end_bytes"];
  EXPECT_EQ(end["sharded_params"], 4 * (root + 4 * block) / 2);
  EXPECT_EQ(end["gradients"], 4 * (root + 4 * block) / 2);
  EXPECT_EQ(end["optimizer_state"], 8 * (root + 4 * block) / 2);
  EXPECT_EQ(got.back()["peak_bytes"]["unsharded_params"], 2 * (root + 2 * block));
}

}  // namespace
}  // namespace shardscope::test
