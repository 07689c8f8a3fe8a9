#include "analyzer/cli/report.h"

#include <optional>
#include <ostream>

#include "analyzer/analysis/run.h"
#include "analyzer/cli/output.h"
#include "analyzer/cli/progress_line.h"
#include "analyzer/report/render.h"

namespace shardscope::cli {

int report(const std::vector<std::string>& paths, const std::string& format, const std::string& output, std::ostream& out, std::ostream& err, const std::string& step_pattern) {
  try {
    std::optional<analysis::AnalysedRun> run;
    {
      ProgressLine progress;
      run = analysis::analyse_stream(paths, {.on_progress = progress.callback(), .step_pattern = step_pattern});
    }
    print_warnings(run->warnings, err);
    const report::Report& r = run->report;
    std::string text;
    if (format == "json") text = report::render_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    else if (format == "html") text = report::render_html(r);
    else text = report::render_text(r, format == "md");
    return write_output(output, text, out, err) ? 0 : 2;
  } catch (const std::exception& e) {
    err << "shardscope: error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace shardscope::cli
