// The what-if of a run's files (metrics/whatif.h) with one rank's events in memory per loading thread: each
// rank is reduced to its replay graph as it is read (replay::build_rank_graph: durations, stream order, host
// waits, collective keys; no events) and its events dropped; the graphs are then joined and replayed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analyzer/metrics/whatif.h"
#include "plugins/load/load.h"

namespace shardscope::analysis {

struct WhatIfRun {
  metrics::WhatIf whatif;
  std::vector<std::string> warnings;  // from loading
  size_t ranks = 0;                   // the ranks replayed
};

// Called on the loading thread as each rank's graph is made, with how many ranks' events are in hand at that
// moment (its own included): what the tests hold to one with one loading thread.
using OnRankGraph = std::function<void(size_t ranks_in_hand)>;

// Throws what plugins::load_each throws, and what metrics::what_if throws.
WhatIfRun what_if_stream(const std::vector<std::string>& paths, const plugins::LoadOptions& options,
                         const metrics::WhatIfChange& change, const OnRankGraph& on_graph = {});

}  // namespace shardscope::analysis
