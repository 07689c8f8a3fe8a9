// Trains 2 ranks of shardscope-train under `shardscope launch` and checks the prefetch: shared by the prefetch
// tests on real CPU runs.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

namespace shardscope::test {

struct Checked {
  int rc = -1;            // check-prefetch's exit code
  nlohmann::json result;  // its JSON
  std::string text;       // its text, for failure messages
};

inline constexpr int kSteps = 6;  // step 0 warm-up, 5 steady

// Trains 2 ranks with FULL_SHARD and `extra`, then checks. `tiny` widened to 256: a block's backward compute
// (about 10 ms here) then outlasts its all-gather (about 2 ms) by enough that hiding it is possible on a CPU
// whose two cores both ranks' compute and communication threads share.
inline Checked train_and_check(const std::filesystem::path& dir, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {SHARDSCOPE_BIN, "launch",     "-n",           "2",
                                   "--",           TRAINER_BIN,  "--preset",     "tiny",
                                   "--dim",        "256",        "--ffn-dim",    "768",
                                   "--seq-len",    "128",        "--batch-size", "2",
                                   "--threads",    "1",          "--steps",      std::to_string(kSteps),
                                   "--sharding",   "full_shard", "--trace-dir",  dir.string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto trained = run(argv);
  EXPECT_EQ(trained.rc, 0) << trained.err;
  Checked c;
  auto j = run({SHARDSCOPE_BIN, "check-prefetch", dir.string(), "--format", "json"});
  c.rc = j.rc;
  c.result = nlohmann::json::parse(j.out, nullptr, false);
  c.text = run({SHARDSCOPE_BIN, "check-prefetch", dir.string()}).out;
  return c;
}

}  // namespace shardscope::test
