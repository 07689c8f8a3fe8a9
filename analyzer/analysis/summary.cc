#include "analyzer/analysis/summary.h"

#include "model/saturating.h"

namespace shardscope::analysis {

RankSummary summarize(const model::Rank& rank, uint64_t order, Scope scope) {
  RankSummary s;
  if (scope == Scope::Everything) {
    s.report = report::rank_report(rank);
    for (const model::Track& t : rank.tracks)
      for (const model::Event& e : t.events)
        if (e.is_device() && e.ph == 'X') {
          int64_t& ns = s.device_time[std::string(rank.str(e.name))];
          ns = model::sat_add(ns, e.dur_ns);  // saturating: durations come from the file
        }
  } else {
    s.report.rank = rank.rank;
    s.report.source = rank.source;
    s.report.format = rank.format;
    s.report.trace_steps = rank.steps.size();
  }
  s.report.prefetch = metrics::check_prefetch(rank);
  metrics::locate_all_gathers(rank, s.report.prefetch);
  s.arrivals = metrics::arrivals(rank, {rank.rank, order});
  return s;
}

}  // namespace shardscope::analysis
