#include "analyzer/cli/whatif.h"

#include <filesystem>
#include <optional>
#include <ostream>
#include <stdexcept>

#include "analyzer/analysis/summary_file.h"
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
    std::optional<plugins::LoadResult> loaded;
    {
      ProgressLine progress;
      const std::vector<std::filesystem::path> in(paths.begin(), paths.end());
      loaded = plugins::load(in, {.on_progress = progress.callback(), .rules = rules});
    }
    print_warnings(loaded->warnings, err);
    const metrics::WhatIf w = metrics::what_if(loaded->trace, change);
    const Result result{.text = [&](bool) { return report::whatif_text(w, change); },
                        .json = [&] { return report::whatif_json(w, change); }};
    return write_result(format, result, "-", out, err) ? 0 : 2;
  });
}

}  // namespace shardscope::cli
