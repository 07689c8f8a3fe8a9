#include "analyzer/cli/check_prefetch.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "analyzer/analysis/run.h"
#include "analyzer/analysis/run_summary.h"
#include "analyzer/analysis/whatif_run.h"
#include "analyzer/cli/output.h"
#include "analyzer/cli/progress_line.h"
#include "analyzer/metrics/prefetch.h"
#include "analyzer/report/prefetch_render.h"
#include "analyzer/report/report_keys.h"
#include "analyzer/report/summary_render.h"
#include "analyzer/report/whatif_render.h"
#include "tracer/format/keys.h"

namespace shardscope::cli {

namespace {

// The replay with BACKWARD_PRE on, where the files can be replayed (traces with device streams or unit
// ranges; not rank summaries), or why it gives no number.
struct Saving {
  std::optional<metrics::WhatIf> whatif;
  metrics::WhatIfNa na = metrics::WhatIfNa::None;
  size_t ranks = 0;
};

// The verdict first, then the worst rank's steps (or those asked for), the per-unit rows with --units.
std::string verdict_text(const analysis::AnalysedRun& run, const report::Selection& sel, bool units,
                         const std::optional<Saving>& saving) {
  const metrics::PrefetchCheck& check = run.prefetch;
  const analysis::RunSummary summary = analysis::summarize_run(run.report);
  const std::vector<int> shown = report::selected_ranks(run.report, sel, &summary.by_prefetch);
  std::string text = fmt::format(
      "verdict: {} (per rank: {})\n",
      check.verdict == metrics::Verdict::NotEffective ? "NOT effective" : report::verdict_name(check.verdict),
      report::run_rule(std::any_of(check.ranks.begin(), check.ranks.end(),
                                   [](const metrics::RankPrefetch& p) { return report::has_warm_up(p); })));
  for (const std::string& l : report::summary_lines(summary))
    if (l.rfind("backward prefetch:", 0) == 0) text += l + "\n";
  if (saving && saving->whatif) text += report::prefetch_saving_sentence(*saving->whatif) + "\n";
  if (saving && !saving->whatif) text += report::prefetch_saving_na_sentence(saving->na, saving->ranks) + "\n";
  if (shown.size() < check.ranks.size())
    text += fmt::format(
        "details below: rank{} {} ({}); --ranks all, worst:N or a list for others, --units for the per-unit rows\n",
        shown.size() == 1 ? "" : "s", analysis::rank_ranges(shown),
        sel.ranks == report::Selection::Ranks::Worst ? "the worst prefetch" : "as selected");
  for (size_t i = 0; i < check.ranks.size(); ++i) {
    if (!std::binary_search(shown.begin(), shown.end(), check.ranks[i].rank)) continue;
    metrics::RankPrefetch p = check.ranks[i];
    if (!sel.steps.empty())
      std::erase_if(p.steps, [&](const metrics::StepPrefetch& s) {
        return std::find(sel.steps.begin(), sel.steps.end(), s.step) == sel.steps.end();
      });
    text += report::prefetch_text(p, run.report.ranks[i].source, false, units, run.report.ranks[i].steps);
  }
  return text;
}

// The replay reads one rank's events at a time (analysis::what_if_stream), as the verdict does, but holds
// every rank's graph: 3.3 MB a rank on the H100 trainer's trace, 7.9 MB with the wirings and schedules of a
// replay (docs/whatif.md). An unasked-for line keeps that to about a GB; `shardscope whatif` has no cap.
constexpr size_t kMaxReplayRanks = 128;

Saving replay_with_pre(const std::vector<std::string>& paths, const plugins::ReadRules& rules, size_t ranks) {
  if (ranks > kMaxReplayRanks) return {.na = metrics::WhatIfNa::ManyRanks, .ranks = ranks};
  try {
    metrics::WhatIfChange change;
    change.backward = metrics::Prefetch::Pre;
    metrics::WhatIf w = analysis::what_if_stream(paths, {.rules = rules}, change).whatif;
    if (w.host_is_device) return {.na = metrics::WhatIfNa::CpuRun, .ranks = ranks};
    return {.whatif = std::move(w), .ranks = ranks};
  } catch (const std::exception&) {
    return {.na = metrics::WhatIfNa::NotReplayable, .ranks = ranks};
  }
}

}  // namespace

int check_prefetch(const std::vector<std::string>& paths, const std::string& format, std::ostream& out,
                   std::ostream& err, const plugins::ReadRules& rules, const report::Selection& sel, bool units,
                   bool whatif) {
  return guarded(err, [&] {
    std::optional<analysis::AnalysedRun> run;
    {
      ProgressLine progress;
      run = analysis::analyse_stream(paths, {.on_progress = progress.callback(), .rules = rules},
                                     analysis::Scope::PrefetchOnly);
    }
    print_warnings(run->warnings, err);
    const metrics::PrefetchCheck& check = run->prefetch;
    const int rc = check.verdict == metrics::Verdict::Effective      ? 0
                   : check.verdict == metrics::Verdict::NotEffective ? 1
                                                                     : 2;
    if (rc == 2)
      err << "shardscope: check-prefetch: nothing to check: no rank has a backward all-gather paired with its unit's "
             "compute\n";
    std::optional<Saving> saving;
    if (rc == 1 && whatif) saving = replay_with_pre(paths, rules, check.ranks.size());
    const Result result{.text = [&](bool) { return verdict_text(*run, sel, units, saving); },
                        .json =
                            [&] {
                              nlohmann::json ranks = nlohmann::json::array();
                              for (size_t i = 0; i < check.ranks.size(); ++i)
                                ranks.push_back(report::prefetch_json(check.ranks[i], run->report.ranks[i].steps));
                              nlohmann::json j{{report::report_keys::kRanks, ranks},
                                               {report::report_keys::kVerdict, report::verdict_name(check.verdict)}};
                              if (saving && saving->whatif) {
                                metrics::WhatIfChange pre;
                                pre.backward = metrics::Prefetch::Pre;
                                j["whatif_backward_pre"] = report::whatif_json(*saving->whatif, pre);
                              } else if (saving) {
                                j["whatif_backward_pre_na"] = report::whatif_na_name(saving->na);
                              }
                              return j;
                            }};
    return write_result(format, result, "-", out, err) ? rc : 2;
  });
}

}  // namespace shardscope::cli
