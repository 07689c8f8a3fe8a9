// The one pipeline: load a run's files, then analyse them. `report`, `check-prefetch`, `diff` and the viewer
// all call it, so they see the same ranks, the same warnings and the same numbers.
#pragma once

#include <string>
#include <vector>

#include "analyzer/metrics/prefetch.h"
#include "analyzer/analysis/report.h"
#include "model/trace.h"
#include "plugins/load/load.h"

namespace shardscope::analysis {

enum class Scope {
  Everything,    // the whole report (which holds the prefetch check)
  PrefetchOnly,  // only the prefetch check: `check-prefetch` pays for nothing else
};

struct AnalysedRun {
  std::vector<std::string> inputs;  // the paths as given
  model::Trace trace;
  std::vector<std::string> warnings;           // from loading
  std::vector<plugins::FileFailure> failures;  // LoadOptions::keep_going: files that did not load
  uint64_t json_bytes = 0;
  report::Report report;           // Scope::Everything
  metrics::PrefetchCheck prefetch;  // always: per rank, and the run's verdict
};

// Loads `paths` (files or run directories) with `options` and analyses them. Throws what plugins::load
// throws (trace::TraceError naming file and byte, MixedRunsError, std::invalid_argument for a bad step
// pattern); with options.keep_going a file that fails is listed in `failures` and the rest are analysed.
AnalysedRun analyse_run(const std::vector<std::string>& paths, const plugins::LoadOptions& options, Scope scope = Scope::Everything);

// The analysis of a loaded trace (what analyse_run does after loading).
void analyse(AnalysedRun& run, Scope scope);

}  // namespace shardscope::analysis
