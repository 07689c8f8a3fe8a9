// A trace that says it is one of several ranks (distributedInfo.world_size > 1, or several ranks loaded) with no
// device activity recognised as communication: a collective library shardscope does not know counts as compute,
// so the report warns in one line naming the rank's three longest kernels (compute or other).
#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

using nlohmann::json;
using shardscope::test::run;
using shardscope::test::TempDir;
namespace fs = std::filesystem;

namespace {

// Four kernels of an unknown library's MoE exchange and its layer's compute (the exchange the longest), a copy,
// and `extra` events; distributedInfo as given ("" none).
std::string trace(const std::string& dist, const std::string& extra = "") {
  return fmt::format(R"J({{{}"traceEvents": [
{{"ph": "X", "cat": "kernel", "name": "void mylib::token_exchange<8>(int4*)", "pid": 0, "tid": 20, "ts": 0, "dur": 50, "args": {{"stream": 20}}}},
{{"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16", "pid": 0, "tid": 7, "ts": 10, "dur": 30, "args": {{"stream": 7}}}},
{{"ph": "X", "cat": "kernel", "name": "softmax_kernel", "pid": 0, "tid": 7, "ts": 45, "dur": 10, "args": {{"stream": 7}}}},
{{"ph": "X", "cat": "kernel", "name": "relu_kernel", "pid": 0, "tid": 7, "ts": 60, "dur": 5, "args": {{"stream": 7}}}},
{{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 7, "ts": 70, "dur": 80, "args": {{"stream": 7}}}}{}
]}})J",
                     dist.empty() ? "" : "\"distributedInfo\": " + dist + ", ", extra);
}

fs::path write(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << text;
  return dir / name;
}

TEST(UnrecognisedComm, ADistributedRankWithoutCollectivesNamesItsLongestKernels) {
  TempDir d;
  const fs::path f = write(d.path(), "rank3.json", trace(R"({"rank": 3, "world_size": 8, "backend": "nccl"})"));
  auto r = run({SHARDSCOPE_BIN, "report", f.string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string want =
      "warning: no communication recognised on rank 3, though its trace says world size 8: its longest kernels, "
      "counted as compute, are void mylib::token_exchange<8>(int4*) (0.050 ms), sm90_xmma_gemm_bf16bf16 (0.030 ms), "
      "softmax_kernel (0.010 ms); if one is a collective library's, docs/spec.md's event classes list the libraries "
      "shardscope knows";
  EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("relu_kernel ("), std::string::npos);  // the fourth longest, and the copy, are not named
  auto j = run({SHARDSCOPE_BIN, "report", f.string(), "--format", "json"});
  ASSERT_EQ(j.rc, 0) << j.err;
  const json warnings = json::parse(j.out)["warnings"];
  ASSERT_EQ(warnings.size(), 1u) << warnings.dump();
  EXPECT_EQ("warning: " + warnings[0].get<std::string>(), want);
  auto h = run({SHARDSCOPE_BIN, "report", f.string(), "--format", "html"});
  EXPECT_NE(h.out.find("no communication recognised on rank 3"), std::string::npos);
}

TEST(UnrecognisedComm, SeveralRanksLoadedSayItWithoutAWorldSize) {
  TempDir d;
  write(d.path() / "run", "a.json", trace(R"({"rank": 0})"));
  write(d.path() / "run", "b.json", trace(R"({"rank": 1})"));
  auto r = run({SHARDSCOPE_BIN, "report", (d.path() / "run").string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("warning: no communication recognised on ranks 0-1, though 2 ranks were loaded: rank 0's "
                       "longest kernels, counted as compute, are void mylib::token_exchange<8>(int4*)"),
            std::string::npos)
      << r.out;
}

TEST(UnrecognisedComm, NoWarningForOneRankOrWhereACollectiveIsRecognised) {
  TempDir d;
  const fs::path alone = write(d.path(), "alone.json", trace(R"({"rank": 0, "world_size": 1})"));
  const fs::path no_dist = write(d.path(), "no_dist.json", trace(""));
  const fs::path nccl = write(d.path(), "nccl.json",
                              trace(R"({"rank": 3, "world_size": 8})",
                                    R"J(,
{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 21, "ts": 0, "dur": 5, "args": {"stream": 21}})J"));
  const fs::path deep_ep = write(d.path(), "deep_ep.json",
                                 trace(R"({"rank": 3, "world_size": 8})",
                                       R"J(,
{"ph": "X", "cat": "kernel", "name": "void deep_ep::internode::combine<8>(int4*)", "pid": 0, "tid": 21, "ts": 0, "dur": 5, "args": {"stream": 21}})J"));
  for (const fs::path& f : {alone, no_dist, nccl, deep_ep}) {
    auto r = run({SHARDSCOPE_BIN, "report", f.string()});
    ASSERT_EQ(r.rc, 0) << f << r.err;
    EXPECT_EQ(r.out.find("no communication recognised"), std::string::npos) << f << r.out;
  }
}

}  // namespace
