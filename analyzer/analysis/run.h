// The one pipeline: load a run's files, then analyse them. `report`, `check-prefetch`, `diff` and the viewer
// all call it, so they see the same ranks, the same warnings and the same numbers. Either way the analysis
// is a map (each rank summarised: summary.h) and a reduce (reduce.h).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/analysis/report.h"
#include "analyzer/analysis/summary.h"
#include "analyzer/metrics/prefetch.h"
#include "model/trace.h"
#include "plugins/load/load.h"

namespace shardscope::analysis {

// `given`: summaries made elsewhere (MPI: by other processes), by the file's order; a file it has one for is
// not read here, only checked with the rest.
using GivenSummaries = std::function<std::optional<RankSummary>(uint64_t order)>;

struct AnalysedRun {
  std::vector<std::string> inputs;             // the paths as given
  model::Trace trace;                          // analyse_run only: the loaded events (empty after analyse_stream)
  std::vector<std::string> warnings;           // from loading
  std::vector<plugins::FileFailure> failures;  // LoadOptions::keep_going: files that did not load
  uint64_t json_bytes = 0;
  report::Report report;            // Scope::Everything; with PrefetchOnly, each rank's header and prefetch
  metrics::PrefetchCheck prefetch;  // always: per rank, and the run's verdict
  std::vector<std::map<std::string, int64_t>> device_time;  // per rank (report.ranks' order), when kept
};

// Loads `paths` (files or run directories) with `options`, keeps the events, and analyses them: for the
// viewer, which shows both. Throws what plugins::load throws (trace::TraceError naming file and byte,
// MixedRunsError, std::invalid_argument for a bad step pattern); with options.keep_going a file that fails is
// listed in `failures` and the rest are analysed.
AnalysedRun analyse_run(const std::vector<std::string>& paths, const plugins::LoadOptions& options,
                        Scope scope = Scope::Everything);

// The same numbers with at most one rank's events in memory per loading thread: each rank is summarised as
// it is read and its events dropped. `trace` stays empty.
// `device_time`: keep every rank's device time by name (what `diff` compares; a report does not need it).
AnalysedRun analyse_stream(const std::vector<std::string>& paths, const plugins::LoadOptions& options,
                           Scope scope = Scope::Everything, bool device_time = false, const GivenSummaries& given = {});

// Every rank of the inputs summarised, trace files and summary files (summary_file.h) alike, each summary
// handed to `each` on the loading thread that made it (several at once), its events gone by then. Returns
// what plugins::load_each returns and throws what it throws.
plugins::LoadResult summarize_each(const std::vector<std::string>& paths, plugins::LoadOptions options, Scope scope,
                                   const std::function<void(RankSummary&&)>& each, const GivenSummaries& given = {});

// The analysis of a loaded trace (what analyse_run does after loading).
void analyse(AnalysedRun& run, Scope scope);

}  // namespace shardscope::analysis
