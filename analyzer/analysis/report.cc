#include "analyzer/analysis/report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analyzer/analysis/reduce.h"
#include "analyzer/analysis/summary.h"
#include "model/saturating.h"

namespace shardscope::report {

namespace {

std::vector<KernelTime> top_device(const model::Rank& rank, size_t n) {
  std::map<model::StringId, KernelTime> by;
  for (const model::Track& t : rank.tracks)
    for (const model::Event& e : t.events) {
      if (!e.is_device() || e.ph != 'X') continue;
      KernelTime& k = by[e.name];
      k.cls = e.cls;
      // One name may run several collectives (ncclDevKernel_Generic): then no one kind is its.
      if (k.count == 0 || k.coll == e.coll) k.coll = e.coll;
      else if (e.cls == model::IntervalClass::Communication)
        k.coll = model::CollectiveKind::Unknown;
      ++k.count;
      k.time_ns = model::sat_add(k.time_ns, e.dur_ns);  // saturating: durations come from the file
    }
  std::vector<KernelTime> out;
  for (auto& [id, k] : by) {
    k.name = std::string(rank.str(id));
    out.push_back(std::move(k));
  }
  std::sort(out.begin(), out.end(), [](const KernelTime& a, const KernelTime& b) { return a.time_ns > b.time_ns; });
  if (out.size() > n) out.resize(n);
  return out;
}

}  // namespace

RankReport rank_report(const model::Rank& rank) {
  RankReport rr;
  rr.rank = rank.rank;
  rr.source = rank.source;
  rr.format = rank.format;
  rr.events = rank.event_count();
  rr.trace_steps = rank.steps.size();
  metrics::DeviceSets sets = metrics::device_sets(rank);
  rr.device_events = sets.device_events;
  rr.whole = metrics::hta_breakdown(rank);
  if (!rr.whole) rr.whole_na = analysis::Na::NoDeviceEvents;
  rr.step_rule = rank.step_rule;
  if (rank.steps.empty()) rr.steps_na = analysis::Na::NoSteps;
  else if (sets.device_events == 0)
    rr.steps_na = analysis::Na::NoDeviceEventsInSteps;
  else {
    for (const model::Step& s : rank.steps) {
      StepRow row{s, metrics::measure(sets, s.start_ns, s.end_ns)};
      if (s.aborted) rr.aborted_steps.push_back(s.number);  // a cut-off step would skew the totals
      else
        rr.all_steps += row.m;
      rr.steps.push_back(row);
    }
    rr.outside = metrics::outside_steps(rank, sets);
  }
  rr.collectives = metrics::collective_stats(rank);
  rr.top_device = top_device(rank, 10);
  rr.memory = metrics::compare_memory(rank);
  return rr;
}

Report build(const model::Trace& trace, std::vector<std::string> inputs, std::vector<std::string> warnings) {
  analysis::RunReducer reducer;
  for (size_t i = 0; i < trace.ranks.size(); ++i)
    reducer.add(analysis::summarize(trace.ranks[i], i, analysis::Scope::Everything));
  return std::move(reducer).finish(std::move(inputs), std::move(warnings), analysis::Scope::Everything);
}

}  // namespace shardscope::report
