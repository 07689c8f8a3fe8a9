// The map half of the analysis: one rank's events in, its summary out. A summary holds everything the report
// shows of the rank (computed from its events alone) and its collectives' arrivals, which the reduce
// (reduce.h) folds into the run's instance table. Once summarised, the rank's events can go.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "analyzer/analysis/report.h"
#include "analyzer/metrics/instances.h"
#include "model/trace.h"

namespace shardscope::analysis {

enum class Scope {
  Everything,    // the whole report (which holds the prefetch check)
  PrefetchOnly,  // only the prefetch check: `check-prefetch` pays for nothing else
};

struct RankSummary {
  report::RankReport report;                  // the prefetch check judged on this rank alone until the reduce
  metrics::RankArrivals arrivals;             // the reduce's input; emptied once folded
  std::map<std::string, int64_t> device_time;  // every device activity's total time, by name (`diff`)
  metrics::RankKey key() const { return arrivals.key; }
};

// `order`: the rank's file's place among the inputs.
RankSummary summarize(const model::Rank& rank, uint64_t order, Scope scope);

}  // namespace shardscope::analysis
