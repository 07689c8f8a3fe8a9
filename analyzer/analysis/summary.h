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
#include "plugins/load/load.h"

namespace shardscope::analysis {

enum class Scope {
  Everything,    // the whole report (which holds the prefetch check)
  PrefetchOnly,  // only the prefetch check: `check-prefetch` pays for nothing else
};

// One collective instance of the rank: the n-th of its kind in its process group (by start), as the trace
// gives it.
struct CollectiveRecord {
  model::CollectiveKind kind = model::CollectiveKind::Unknown;
  int64_t ordinal = 0;
  int64_t seq = -1;   // the process group's sequence number, -1 when the trace does not say
  std::string group;  // the process group's name, "" when the trace does not say
  int32_t unit = -1, group_size = 0;
  int64_t bytes = model::kUnknown, issued_ns = model::kUnknown;
  int64_t start_ns = 0, end_ns = 0;  // on the trace's clock
  int64_t wall_start_ns = 0;         // start on the wall clock (arrivals.wall_start)
};

struct RankSummary {
  report::RankReport report;                   // the prefetch check judged on this rank alone until the reduce
  metrics::RankArrivals arrivals;              // the reduce's input
  std::vector<CollectiveRecord> collectives;   // by kind, group, then ordinal
  std::map<std::string, int64_t> device_time;  // every device activity's total time, by name (`diff`)
  // From the loader: what check_one_run needs, the file's warnings, its size and the text parsed.
  plugins::RankHeader header;
  std::vector<std::string> warnings;
  uint64_t trace_bytes = 0;
  metrics::RankKey key() const { return arrivals.key; }
};

// `order`: the rank's file's place among the inputs.
RankSummary summarize(const model::Rank& rank, uint64_t order, Scope scope);

}  // namespace shardscope::analysis
