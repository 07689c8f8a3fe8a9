#include "analyzer/cli/check_prefetch.h"

#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "analyzer/analysis/run.h"
#include "analyzer/cli/output.h"
#include "analyzer/cli/progress_line.h"
#include "analyzer/metrics/prefetch.h"
#include "analyzer/report/prefetch_render.h"
#include "analyzer/report/report_keys.h"
#include "tracer/format/keys.h"

namespace shardscope::cli {

int check_prefetch(const std::vector<std::string>& paths, const std::string& format, std::ostream& out, std::ostream& err, const std::string& step_pattern) {
  try {
    std::optional<analysis::AnalysedRun> run;
    {
      ProgressLine progress;
      run = analysis::analyse_stream(paths, {.on_progress = progress.callback(), .step_pattern = step_pattern}, analysis::Scope::PrefetchOnly);
    }
    print_warnings(run->warnings, err);
    const metrics::PrefetchCheck& check = run->prefetch;
    const int rc = check.verdict == metrics::Verdict::Effective ? 0 : check.verdict == metrics::Verdict::NotEffective ? 1 : 2;
    if (rc == 2) err << "shardscope: check-prefetch: nothing to check: no rank has a backward all-gather paired with its unit's compute\n";
    std::string text;
    if (format == "json") {
      nlohmann::json ranks = nlohmann::json::array();
      for (const metrics::RankPrefetch& p : check.ranks) ranks.push_back(report::prefetch_json(p));
      text = nlohmann::json{{report::report_keys::kRanks, ranks}, {report::report_keys::kVerdict, report::verdict_name(check.verdict)}}.dump(
                 2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    } else {
      for (size_t i = 0; i < check.ranks.size(); ++i) text += report::prefetch_text(check.ranks[i], run->report.ranks[i].source, false, true);
      text += fmt::format("verdict: {} (per rank: {})\n", check.verdict == metrics::Verdict::NotEffective ? "NOT effective" : report::verdict_name(check.verdict),
                          report::kRunRule);
    }
    if (!write_output("-", format == "json" ? text : shown_as_text(text), out, err)) return 2;
    return rc;
  } catch (const std::exception& e) {
    print_error(err, e.what());
    return 2;
  }
}

}  // namespace shardscope::cli
