#include "analyzer/report/sections/steps.h"

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/report/cells.h"
#include "analyzer/report/html_parts.h"
#include "analyzer/report/report_keys.h"
#include "analyzer/report/sentences.h"
#include "model/saturating.h"

namespace shardscope::report {
namespace {

namespace k = report_keys;
using nlohmann::json;

// Why a step's overlap % is missing, and the all-steps row's.
constexpr const char* kNoCommInStep = "n/a: no communication in the step";
constexpr const char* kNoCommInAnyStep = "n/a: no communication in any step";

// One row of the table: `row` names it in the n/a notes ("step 3", "all steps"). In a braced list, so the
// n/a notes are taken in column order.
std::vector<std::string> cells(const std::string& label, const std::string& row, const metrics::WindowMetrics& m,
                               NaNotes& na) {
  const bool all = row == "all steps";
  return {label,
          ms_cell(m.window_ns),
          ms_cell(m.compute_ns),
          ms_cell(m.comm_ns),
          ms_cell(m.overlap_ns),
          ms_cell(m.exposed_ns()),
          na.value_or(number_cell(m.overlap_pct()), row, "overlap %", all ? kNoCommInAnyStep : kNoCommInStep),
          na.value_or(number_cell(m.comm_fraction_pct()), row, "comm %", na_empty_window()),
          na.value_or(number_cell(m.exposed_fraction_pct()), row, "exposed %", na_empty_window()),
          ms_cell(m.idle_ns())};
}

// The shown steps' rows, then the all-steps row.
Table step_table(const Context& c, NaNotes& na) {
  const RankReport& rr = *c.rank;
  Table t{{"step", "time ms", "compute ms", "comm ms", "overlapped ms", "exposed ms", "overlap %", "comm %",
           "exposed %", "idle ms"},
          {},
          1};
  for (const StepRow& s : rr.steps)
    if (c.step_shown(s.step.number))
      t.rows.push_back(cells(step_label(s.step), fmt::format("step {}", s.step.number), s.m, na));
  t.rows.push_back(cells("all", "all steps", rr.all_steps, na));
  return t;
}

json window(const metrics::WindowMetrics& m, const char* no_comm) {
  json o;
  o[k::kStepNs] = m.window_ns;
  o[k::kComputeNs] = m.compute_ns;
  o[k::kCommNs] = m.comm_ns;
  o[k::kOverlapNs] = m.overlap_ns;
  o[k::kExposedNs] = m.exposed_ns();
  o[k::kIdleNs] = m.idle_ns();
  put_pct(o, k::kOverlapPct, m.overlap_pct(), no_comm);
  put_pct(o, k::kCommFractionPct, m.comm_fraction_pct(), na_empty_window());
  put_pct(o, k::kExposedFractionPct, m.exposed_fraction_pct(), na_empty_window());
  put_pct(o, k::kIdlePct, m.idle_pct(), na_empty_window());
  put_pct(o, k::kComputePct, m.compute_pct(), na_empty_window());
  return o;
}

// The shown steps end to end, one stacked bar each, on a time axis in ms.
std::string step_strip(const Context& c) {
  const RankReport& rr = *c.rank;
  int64_t total = 0;
  for (const StepRow& s : rr.steps)
    if (c.step_shown(s.step.number)) total = model::sat_add(total, std::max<int64_t>(0, s.m.window_ns));
  const double axis_ms = double(std::max<int64_t>(1, total)) / 1e6;
  std::vector<double> t = html::ticks(axis_ms);
  const double scale_ms = t.size() > 1 && t.back() < axis_ms ? t.back() + (t[1] - t[0]) : std::max(t.back(), axis_ms);
  const double x0 = 10, SW = 720;
  std::string h = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"78\" role=\"img\"><title>rank {}: the steps "
      "shown, end to end, in ms</title>",
      x0 + SW + 20, rr.rank);
  double x = x0;
  for (const StepRow& s : rr.steps) {
    if (!c.step_shown(s.step.number)) continue;
    double w = SW * double(s.m.window_ns) / 1e6 / scale_ms;
    h += html::stacked_bar(s.m, x, 16, std::max(0.0, w - 2), 24, fmt::format("step {}, ", s.step.number));
    h += fmt::format("<text x=\"{:.1f}\" y=\"12\" font-size=\"10\">step {}: {:.3f} ms</text>", x, s.step.number,
                     s.m.window_ns / 1e6);
    x += w;
  }
  return h + html::axis(x0, 44, SW, scale_ms, "ms, the shown steps end to end") + "</svg>\n";
}

class Steps final : public Section {
 public:
  std::string_view key() const override { return k::kSteps; }

  void text(const Context& c, TextOut& out) const override {
    const RankReport& rr = *c.rank;
    if (rr.steps.empty()) return out.para("steps: " + na_text(rr.steps_na));
    NaNotes na;
    const Table t = step_table(c, na);
    const std::string left_out = steps_left_out(rr, c.steps, c.sel);
    if (step_rule_said(rr.step_rule)) out.para("steps made by: " + step_rule_sentence(rr.step_rule));
    out.para(left_out.empty() ? std::string("per step:") : "per step (" + left_out + "):");
    out.table(t, na);
    out.legend(t.header);
    if (std::string a = aborted_steps_sentence(rr.aborted_steps); !a.empty()) out.para(a);
    if (std::string o = outside_steps_sentence(rr.outside); !o.empty()) out.para(o);
  }

  void json(const Context& c, nlohmann::json& o) const override {
    const RankReport& rr = *c.rank;
    o[k::kSteps] = nlohmann::json::array();
    o[k::kStepsMadeBy] = step_rule_code(rr.step_rule);
    for (const StepRow& s : rr.steps) {
      nlohmann::json so = window(s.m, kNoCommInStep);
      so[k::kStep] = s.step.number;
      so[k::kStartNs] = s.step.start_ns;
      if (s.step.aborted) so[k::kAborted] = true;
      o[k::kSteps].push_back(so);
    }
    if (rr.steps.empty()) {
      o[k::kAllSteps] = nullptr;
      o[k::kNa][k::kSteps] = na_text(rr.steps_na);
      return;
    }
    o[k::kAllSteps] = window(rr.all_steps, kNoCommInAnyStep);
    if (!rr.aborted_steps.empty())
      o[k::kAbortedSteps] = {{k::kSteps, rr.aborted_steps}, {k::kReason, aborted_steps_sentence(rr.aborted_steps)}};
    const metrics::OutsideSteps& out_of = rr.outside;
    o[k::kOutsideSteps] = {
        {k::kFirstStep, out_of.first_step},
        {k::kLastStep, out_of.last_step},
        {k::kBeforeFirstStep, {{k::kDeviceEvents, out_of.before_events}, {k::kBusyNs, out_of.before_ns}}},
        {k::kAfterLastStep, {{k::kDeviceEvents, out_of.after_events}, {k::kBusyNs, out_of.after_ns}}}};
  }

  void html(const Context& c, std::string& h) const override {
    const RankReport& rr = *c.rank;
    if (rr.steps.empty()) {
      h += "<p>Steps: " + html_escape(na_text(rr.steps_na)) + "</p>\n";
      return;
    }
    if (step_rule_said(rr.step_rule))
      h += "<p>Steps made by: " + html_escape(step_rule_sentence(rr.step_rule)) + "</p>\n";
    h += step_strip(c);
    NaNotes na;
    const Table t = step_table(c, na);
    h += html::number_table(t, na);
    if (std::string a = aborted_steps_sentence(rr.aborted_steps); !a.empty()) h += "<p>" + html_escape(a) + "</p>\n";
    if (std::string o = outside_steps_sentence(rr.outside); !o.empty()) h += "<p>" + html_escape(o) + "</p>\n";
  }
};

}  // namespace

const Section& steps_section() {
  static const Steps s;
  return s;
}

}  // namespace shardscope::report
