#include "analyzer/cli/whatif.h"

#include <filesystem>
#include <optional>
#include <ostream>
#include <stdexcept>

#include "analyzer/analysis/summary_file.h"
#include "analyzer/analysis/whatif_run.h"
#include "analyzer/cli/output.h"
#include "analyzer/cli/progress_line.h"
#include "analyzer/report/whatif_render.h"

namespace shardscope::cli {

int whatif(const std::vector<std::string>& paths, const metrics::WhatIfChange& change, const std::string& format,
           std::ostream& out, std::ostream& err, const plugins::ReadRules& rules) {
  return guarded(err, [&] {
    // A rank summary keeps the figures, not the events a replay needs.
    for (const std::filesystem::path& f : plugins::expand_inputs({paths.begin(), paths.end()}))
      if (analysis::is_summary_file(f))
        throw std::invalid_argument(f.string() + ": a rank summary holds no events to replay; give the trace files");
    std::optional<analysis::WhatIfRun> run;
    {
      ProgressLine progress;
      run = analysis::what_if_stream(paths, {.on_progress = progress.callback(), .rules = rules}, change);
    }
    print_warnings(run->warnings, err);
    const metrics::WhatIf& w = run->whatif;
    const Result result{.text = [&](bool) { return report::whatif_text(w, change); },
                        .json = [&] { return report::whatif_json(w, change); }};
    return write_result(format, result, "-", out, err) ? 0 : 2;
  });
}

}  // namespace shardscope::cli
