// The report's shared sentences: the wording of every analysis::Na, percentages with their reason, and the
// whole-trace and outside-steps lines, for the text, markdown, HTML and JSON renderers and the diff.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/analysis/na.h"
#include "analyzer/analysis/report.h"

namespace shardscope::report {

// "n/a: no communication", ...; "" for Na::None. `kind` names the collective of Na::KindNotInRun.
std::string na_text(analysis::Na why, model::CollectiveKind kind = model::CollectiveKind::None);
// "12.34 %" or the reason ("n/a: no communication"), never both.
std::string pct_or(const std::optional<double>& v, const std::string& why);
// The reason an overlap percentage is missing.
inline std::string na_overlap() { return na_text(analysis::Na::NoCommunication); }
// The reason a percentage of an empty window is missing.
inline std::string na_empty_window() { return na_text(analysis::Na::EmptyWindow); }
// "The whole-trace numbers are ...": the HTA calls and setting they reproduce, and the events HTA's step
// filter leaves out.
std::string whole_trace_setting(const metrics::HtaBreakdown& w);
// The whole-trace figures unrounded, said after the HTA line's (which rounds to whole µs).
std::string exact_line(const metrics::HtaBreakdown& w);
// "12 device events (3.400 ms busy) before step 2 and ... are outside the step table", or "" when none.
std::string outside_steps_sentence(const metrics::OutsideSteps& o);
// "step 7 did not complete (the trace marks it aborted): left out of the all-steps row and the prefetch
// verdict"; "" when every step completed.
std::string aborted_steps_sentence(const std::vector<int64_t>& steps);
// A step table's label: the number, and "(aborted)" on a step that did not complete.
std::string step_label(const model::Step& s);
// The rule that made the steps: a code for JSON ("profiler_step", "optimizer_step", ...) and how the
// report says it ("inferred from the optimizer: ..."). The text shows it only where the trace's own
// schedule did not make the steps (step_rule_said).
const char* step_rule_code(model::StepRule rule);
std::string step_rule_sentence(model::StepRule rule);
bool step_rule_said(model::StepRule rule);

// The report's warnings: the loader's, then a distributed run in which no communication was recognised
// (Report::unrecognised_comm), naming the longest kernels that were counted as compute instead.
std::vector<std::string> report_warnings(const Report& r);
// The report's notes, in order: ranks with different step counts, then what limits the straggler matching.
std::vector<std::string> report_notes(const Report& r);
// Why there is no straggler analysis; "" when there is one.
std::string na_text(metrics::StragglersNa why);

}  // namespace shardscope::report
