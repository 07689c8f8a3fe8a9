// Everything a report shows, computed once from a loaded trace; the renderers (text, md, json, html) and
// `diff` only format it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/metrics/breakdown.h"
#include "analyzer/metrics/collectives.h"
#include "analyzer/metrics/instances.h"
#include "analyzer/metrics/memory_model.h"
#include "analyzer/analysis/na.h"
#include "analyzer/metrics/prefetch.h"
#include "model/trace.h"

namespace shardscope::report {

struct StepRow {
  model::Step step;
  metrics::WindowMetrics m;
};

struct KernelTime {
  std::string name;
  model::IntervalClass cls;
  int64_t count = 0, time_ns = 0;
  // Communication: the collective its events carry out (Unknown where they say none or differ; None otherwise).
  model::CollectiveKind coll = model::CollectiveKind::None;
};

struct RankReport {
  int rank = 0;
  std::string source, format;
  size_t events = 0, device_events = 0;
  std::optional<metrics::HtaBreakdown> whole;
  analysis::Na whole_na = analysis::Na::None;  // why `whole` is missing
  size_t trace_steps = 0;  // the steps the trace marks (`steps` is empty when they hold no device activity)
  std::vector<StepRow> steps;
  metrics::WindowMetrics all_steps;            // summed over the steps that completed
  std::vector<int64_t> aborted_steps;          // steps the trace marks as not completed: shown, left out of all_steps
  analysis::Na steps_na = analysis::Na::None;  // why there are no per-step numbers
  model::StepRule step_rule = model::StepRule::None;  // which rule made the steps
  metrics::OutsideSteps outside;                      // device activity before the first step and after the last
  std::vector<metrics::CollectiveStats> collectives;
  std::vector<KernelTime> top_device;  // the device activities that took the most time, by name
  metrics::RankPrefetch prefetch;
  metrics::RankMemory memory;
};

// Ranks whose traces say they are part of a distributed run (world size > 1, or several ranks loaded) but on
// which no device activity is recognised as communication: a library's kernels shardscope does not know are
// counted as compute. The renderers word it (sentences.h).
struct UnrecognisedComm {
  std::vector<int> ranks;
  int world_size = 0;               // the largest the traces say; 0 when none says one
  std::vector<KernelTime> longest;  // the first such rank's three longest kernels (compute or other)
};

struct Report {
  std::vector<std::string> inputs;
  std::vector<std::string> warnings;  // from loading
  // Ranks have different step counts: the ranks with each count (empty when all agree).
  std::map<size_t, std::vector<int>> step_counts;
  std::vector<RankReport> ranks;
  metrics::Stragglers stragglers;
  std::vector<metrics::LinkStats> links;  // per kind across ranks, each instance timed by its fastest rank
  metrics::Verdict prefetch_verdict = metrics::Verdict::NotApplicable;  // the run's, across ranks
  std::optional<UnrecognisedComm> unrecognised_comm;
};

// One rank's numbers, from its events alone; the prefetch check is left to analysis::summarize.
RankReport rank_report(const model::Rank& rank);

// A loaded trace's report: each rank summarised, then reduced (analysis/summary.h, analysis/reduce.h).
Report build(const model::Trace& trace, std::vector<std::string> inputs, std::vector<std::string> warnings);

}  // namespace shardscope::report
