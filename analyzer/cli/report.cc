#include "analyzer/cli/report.h"

#include <optional>
#include <ostream>

#include "analyzer/analysis/run.h"
#include "analyzer/cli/output.h"
#include "analyzer/cli/progress_line.h"
#include "analyzer/report/render.h"

namespace shardscope::cli {

std::string render(const report::Report& r, const std::string& format, const report::Selection& sel) {
  if (format == "json") return report::render_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (format == "html") return report::render_html(r, sel);
  return shown_as_text(report::render_text(r, format == "md", sel));
}

int report(const std::vector<std::string>& paths, const std::string& format, const std::string& output, std::ostream& out, std::ostream& err,
           const std::string& step_pattern, const report::Selection& sel) {
  try {
    std::optional<analysis::AnalysedRun> run;
    {
      ProgressLine progress;
      run = analysis::analyse_stream(paths, {.on_progress = progress.callback(), .step_pattern = step_pattern});
    }
    print_warnings(run->warnings, err);
    return write_output(output, render(run->report, format, sel), out, err) ? 0 : 2;
  } catch (const std::exception& e) {
    print_error(err, e.what());
    return 2;
  }
}

}  // namespace shardscope::cli
