// `shardscope launch` as a user runs it: real child processes, their variables, output and failures.
#include <gtest/gtest.h>

#include <chrono>

#include "tests/support/run.h"

namespace shardscope::test {
namespace {

TEST(Launch, GivesEachRankTheTorchrunVariablesAndPrefixesItsOutput) {
  RunResult r = run({SHARDSCOPE_BIN, "launch", "-n", "3", "--master-port", "29777", "--", "/bin/sh", "-c",
                     "echo \"$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR:$MASTER_PORT\"; echo err >&2"});
  EXPECT_EQ(r.rc, 0) << r.err;
  for (int k = 0; k < 3; ++k) {
    std::string rank = std::to_string(k);
    EXPECT_NE(r.out.find("[rank " + rank + "] " + rank + " " + rank + " 3 3 127.0.0.1:29777\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("[rank " + rank + "] err\n"), std::string::npos) << r.out;
  }
}

TEST(Launch, OneFailingRankStopsTheOthersAndSetsTheExitCode) {
  auto t0 = std::chrono::steady_clock::now();
  RunResult r = run({SHARDSCOPE_BIN, "launch", "-n", "3", "--", "/bin/sh", "-c",
                     "if [ \"$RANK\" = 1 ]; then sleep 0.3; exit 7; fi; exec sleep 60"});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));  // not the 60 s of the others
  EXPECT_EQ(r.rc, 7);
  EXPECT_NE(r.err.find("rank 1 exited with code 7; stopping the other ranks"), std::string::npos) << r.err;
}

TEST(Launch, AProgramThatCannotRunIsReported) {
  RunResult r = run({SHARDSCOPE_BIN, "launch", "-n", "2", "--", "/nonexistent/program"});
  EXPECT_EQ(r.rc, 127);
  EXPECT_NE(r.out.find("cannot run /nonexistent/program"), std::string::npos) << r.out;
  RunResult none = run({SHARDSCOPE_BIN, "launch", "-n", "2"});
  EXPECT_EQ(none.rc, 2);
}

}  // namespace
}  // namespace shardscope::test
