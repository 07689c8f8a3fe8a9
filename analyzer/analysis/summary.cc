#include "analyzer/analysis/summary.h"

#include <algorithm>
#include <tuple>

#include "analyzer/metrics/clock_map.h"
#include "model/saturating.h"
#include "tracer/format/error.h"
#include "tracer/format/printable.h"

#include <fmt/format.h>

namespace shardscope::analysis {

namespace {

// A sum of the trace's own durations or sizes that reached the end of int64 (sums saturate rather than wrap):
// what it is, for the error; "" when none did. No saturated total is ever shown as a number.
std::string saturated_total(const report::RankReport& r, const std::map<std::string, int64_t>& device_time) {
  auto at_limit = [](int64_t v) { return v == INT64_MAX || v == INT64_MIN; };
  for (const metrics::CollectiveStats& c : r.collectives)
    if (at_limit(c.time_ns) || at_limit(c.sized_time_ns) || at_limit(c.bytes))
      return fmt::format("{} collectives' durations or sizes", model::to_string(c.kind));
  for (const auto& [name, ns] : device_time)
    if (at_limit(ns)) return fmt::format("durations of the device activity '{}'", trace::printable(name, 80));
  const metrics::WindowMetrics& w = r.all_steps;
  for (int64_t v : {w.window_ns, w.compute_ns, w.comm_ns, w.overlap_ns, w.busy_ns})
    if (at_limit(v)) return "step windows";
  for (const metrics::StepPrefetch& st : r.prefetch.steps)
    for (int64_t v : {st.ag_ns, st.hidden_ns, st.exposed_wait_ns})
      if (at_limit(v)) return fmt::format("backward all-gathers of step {}", st.step);
  if (at_limit(r.prefetch.steady_ag_ns) || at_limit(r.prefetch.steady_hidden_ns))
    return "backward all-gathers of the steady steps";
  return "";
}

}  // namespace

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
    // The steps' windows alone (no metrics): check-prefetch compares an all-gather's queue with its step.
    for (const model::Step& st : rank.steps) s.report.steps.push_back({st, {}});
  }
  s.report.prefetch = metrics::check_prefetch(rank);
  // Each collective's instance, worked out once for the prefetch check, the arrivals and the records.
  const std::vector<metrics::CollectiveRef> ids = metrics::instance_ids(rank);
  metrics::locate_all_gathers(rank, s.report.prefetch, ids);
  if (const std::string what = saturated_total(s.report, s.device_time); !what.empty())
    throw trace::TraceError(
        rank.source, 0,
        fmt::format("the {} add up to more than 64-bit nanoseconds hold (about 292 years): not a real run's times",
                    what));
  s.arrivals = metrics::arrivals(rank, {rank.rank, order}, ids);
  s.header = plugins::header_of(rank, true);
  // The instances, each with its place among its kind in its group (as arrivals() numbers them).
  const metrics::ClockMap clock(rank.clock_sync);
  std::map<std::tuple<model::CollectiveKind, std::string, int64_t>, CollectiveRecord> by_place;
  std::map<std::pair<model::CollectiveKind, std::string>, int64_t> place;
  for (const metrics::CollectiveRef& r : ids) {
    const model::Event& e = rank.tracks[r.track].events[r.index];
    const int64_t ordinal = place[{r.id.kind, r.id.group}]++;
    by_place[{r.id.kind, r.id.group, ordinal}] = {r.id.kind,
                                                  ordinal,
                                                  r.id.by_seq ? r.id.n : -1,
                                                  r.id.group,
                                                  e.unit,
                                                  e.group_size,
                                                  e.bytes,
                                                  e.issued_ns,
                                                  e.ts_ns,
                                                  model::sat_add(e.ts_ns, e.dur_ns),
                                                  clock.to_realtime(e.ts_ns)};
  }
  for (auto& [k, c] : by_place) s.collectives.push_back(std::move(c));
  return s;
}

}  // namespace shardscope::analysis
