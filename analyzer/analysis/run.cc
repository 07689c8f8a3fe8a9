#include "analyzer/analysis/run.h"

#include <filesystem>

namespace shardscope::analysis {

AnalysedRun analyse_run(const std::vector<std::string>& paths, const plugins::LoadOptions& options, Scope scope) {
  AnalysedRun run;
  run.inputs = paths;
  std::vector<std::filesystem::path> in(paths.begin(), paths.end());
  plugins::LoadResult loaded = plugins::load(in, options);
  run.trace = std::move(loaded.trace);
  run.warnings = std::move(loaded.warnings);
  run.failures = std::move(loaded.failures);
  run.json_bytes = loaded.json_bytes;
  analyse(run, scope);
  return run;
}

void analyse(AnalysedRun& run, Scope scope) {
  if (scope == Scope::Everything) {
    run.report = report::build(run.trace, run.inputs, run.warnings);
    run.prefetch.verdict = run.report.prefetch_verdict;
    for (const report::RankReport& r : run.report.ranks) run.prefetch.ranks.push_back(r.prefetch);
  } else {
    run.prefetch = metrics::check_prefetch(run.trace);
  }
}

}  // namespace shardscope::analysis
