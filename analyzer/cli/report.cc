#include "analyzer/cli/report.h"

#include <optional>
#include <ostream>

#include "analyzer/analysis/run.h"
#include "analyzer/cli/progress_line.h"
#include "analyzer/report/render.h"

namespace shardscope::cli {

Result report_result(const report::Report& r, const report::Selection& sel) {
  return {.text = [&r, &sel](bool markdown) { return report::render_text(r, markdown, sel); },
          .json = [&r] { return report::render_json(r); },
          .html = [&r, &sel] { return report::render_html(r, sel); }};
}

void give_memory(report::Report& r, const metrics::MemoryGiven& given) {
  for (report::RankReport& rr : r.ranks) metrics::give_memory_inputs(rr.memory, given);
}

int report(const std::vector<std::string>& paths, const std::string& format, const std::string& output,
           std::ostream& out, std::ostream& err, const plugins::ReadRules& rules, const report::Selection& sel,
           const metrics::MemoryGiven& given) {
  return guarded(err, [&] {
    std::optional<analysis::AnalysedRun> run;
    {
      ProgressLine progress;
      run = analysis::analyse_stream(paths, {.on_progress = progress.callback(), .rules = rules});
    }
    print_warnings(run->warnings, err);
    give_memory(run->report, given);
    return write_result(format, report_result(run->report, sel), output, out, err) ? 0 : 2;
  });
}

}  // namespace shardscope::cli
