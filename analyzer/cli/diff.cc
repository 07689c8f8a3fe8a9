#include "analyzer/cli/diff.h"

#include <optional>
#include <ostream>

#include "analyzer/analysis/diff.h"
#include "analyzer/cli/output.h"
#include "analyzer/cli/progress_line.h"
#include "analyzer/report/diff_render.h"

namespace shardscope::cli {

int diff(const std::string& a_path, const std::string& b_path, const std::string& format, std::ostream& out,
         std::ostream& err, const plugins::ReadRules& rules) {
  return guarded(err, [&] {
    std::optional<analysis::AnalysedRun> a, b;
    {
      ProgressLine progress;
      const plugins::LoadOptions opts{.on_progress = progress.callback(), .rules = rules};
      a = analysis::analyse_stream({a_path}, opts, analysis::Scope::Everything, true);
      b = analysis::analyse_stream({b_path}, opts, analysis::Scope::Everything, true);
    }
    print_warnings(a->warnings, err);
    print_warnings(b->warnings, err);
    const analysis::RunDiff d = analysis::diff_runs(*a, *b);
    if (d.ranks.empty()) {
      print_error(err, "the two runs have no rank in common");
      return 2;
    }
    const Result result{.text = [&](bool) { return report::diff_text(d, a_path, b_path); },
                        .json = [&] { return report::diff_json(d, a_path, b_path); }};
    return write_result(format, result, "-", out, err) ? 0 : 2;
  });
}

}  // namespace shardscope::cli
