#include "analyzer/analysis/summary.h"

#include <algorithm>

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
  s.header = plugins::header_of(rank, true);
  // The instances, each with its place among its kind (the same order arrivals() numbers them in).
  std::map<model::CollectiveKind, std::vector<const model::Event*>> by_kind;
  for (const model::Track& t : rank.tracks)
    for (const model::Event& e : t.events)
      if (e.cls == model::IntervalClass::Communication && e.ph == 'X') by_kind[e.coll].push_back(&e);
  for (auto& [kind, events] : by_kind) {
    std::stable_sort(events.begin(), events.end(), [](const model::Event* a, const model::Event* b) { return a->ts_ns < b->ts_ns; });
    const std::vector<int64_t>& wall = s.arrivals.wall_start.at(kind);
    for (size_t n = 0; n < events.size(); ++n) {
      const model::Event& e = *events[n];
      s.collectives.push_back({kind, int64_t(n), e.unit, e.group_size, e.bytes, e.issued_ns, e.ts_ns, model::sat_add(e.ts_ns, e.dur_ns), wall[n]});
    }
  }
  return s;
}

}  // namespace shardscope::analysis
