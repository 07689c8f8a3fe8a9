// The verdict rules of prefetch.cc, shared with the cross-rank pass (prefetch_peers.cc) that re-judges a
// step once a late peer has been named.
#pragma once

#include "analyzer/metrics/prefetch.h"

namespace shardscope::metrics {

// The step's totals, verdict and cause from its unit pairs.
void judge_step(StepPrefetch& step);
// The run's verdict from its steady-state steps (docs/check-prefetch.md: how the run's verdict is reached).
void judge_run(RankPrefetch& rank);

}  // namespace shardscope::metrics
