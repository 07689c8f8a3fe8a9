// `shardscope launch -n N -- PROGRAM ARGS...`: starts N local ranks with the torchrun variables, prefixes
// each output line with its rank, and stops them all when one fails.
#pragma once

#include <string>
#include <vector>

namespace shardscope::cli {

struct LaunchOptions {
  int ranks = 1;
  int master_port = 0;     // 0: a free port
  int grace_seconds = 10;  // after SIGTERM, before SIGKILL
  std::vector<std::string> command;
};

// Returns the exit code: 0 when every rank succeeded, else the first failing rank's code (128 + signal for a
// rank killed by a signal), or 2 when the ranks could not be started.
int launch(const LaunchOptions& o);

}  // namespace shardscope::cli
