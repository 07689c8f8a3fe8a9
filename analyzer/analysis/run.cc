#include "analyzer/analysis/run.h"

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "analyzer/analysis/reduce.h"
#include "analyzer/analysis/summary_file.h"

namespace shardscope::analysis {

namespace {

// The reduce's output into the run: the report, and the prefetch check read off it.
void finish(AnalysedRun& run, RunReducer&& reducer,
            std::vector<std::pair<metrics::RankKey, std::map<std::string, int64_t>>> device_time, Scope scope) {
  run.report = std::move(reducer).finish(run.inputs, run.warnings, scope);
  run.prefetch.verdict = run.report.prefetch_verdict;
  for (const report::RankReport& r : run.report.ranks) run.prefetch.ranks.push_back(r.prefetch);
  std::sort(device_time.begin(), device_time.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [key, d] : device_time) run.device_time.push_back(std::move(d));
}

}  // namespace

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

plugins::LoadResult summarize_each(const std::vector<std::string>& paths, plugins::LoadOptions options, Scope scope,
                                   const std::function<void(RankSummary&&)>& each, const GivenSummaries& given) {
  options.claim = [&](uint64_t order, const std::filesystem::path& file) -> std::optional<plugins::Claimed> {
    std::optional<RankSummary> got = given ? given(order) : std::nullopt;
    if (!got && !is_summary_file(file)) return std::nullopt;
    RankSummary s = got ? std::move(*got) : read_summary(file, order);
    plugins::Claimed c{s.header, s.warnings, s.trace_bytes};
    each(std::move(s));
    return c;
  };
  std::vector<std::filesystem::path> in(paths.begin(), paths.end());
  return plugins::load_each(in, options, [&](plugins::LoadedRank& loaded) {
    RankSummary s = summarize(loaded.rank, loaded.order, scope);  // the rank's events in hand
    s.header = loaded.header;
    s.warnings = loaded.warnings;
    s.trace_bytes = loaded.bytes;
    each(std::move(s));
  });
}

AnalysedRun analyse_stream(const std::vector<std::string>& paths, const plugins::LoadOptions& options, Scope scope,
                           bool keep_device_time, const GivenSummaries& given) {
  AnalysedRun run;
  run.inputs = paths;
  std::mutex mu;
  RunReducer reducer;
  std::vector<std::pair<metrics::RankKey, std::map<std::string, int64_t>>> device_time;
  plugins::LoadResult loaded = summarize_each(
      paths, options, scope,
      [&](RankSummary&& s) {
        std::lock_guard lock(mu);
        if (keep_device_time) device_time.emplace_back(s.key(), std::move(s.device_time));
        reducer.add(std::move(s));
      },
      given);
  run.warnings = std::move(loaded.warnings);
  run.failures = std::move(loaded.failures);
  run.json_bytes = loaded.json_bytes;
  finish(run, std::move(reducer), std::move(device_time), scope);
  return run;
}

void analyse(AnalysedRun& run, Scope scope) {
  RunReducer reducer;
  std::vector<std::pair<metrics::RankKey, std::map<std::string, int64_t>>> device_time;
  for (size_t i = 0; i < run.trace.ranks.size(); ++i) {
    RankSummary s = summarize(run.trace.ranks[i], i, scope);
    if (scope == Scope::Everything) device_time.emplace_back(s.key(), std::move(s.device_time));
    reducer.add(std::move(s));
  }
  finish(run, std::move(reducer), std::move(device_time), scope);
}

}  // namespace shardscope::analysis
