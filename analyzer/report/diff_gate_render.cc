#include "analyzer/report/diff_gate_render.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analyzer/analysis/rank_test.h"
#include "analyzer/report/prefetch_render.h"
#include "analyzer/report/sentences.h"
#include "analyzer/report/table.h"

namespace shardscope::report {
namespace {

using analysis::GateOutcome;
using analysis::GateResult;
using analysis::Noise;
using analysis::RunChange;

// A figure as shown: bytes in MiB (the key stays in bytes), the rest with 3 decimals.
std::string shown(double v, const RunChange& c) {
  if (c.unit == analysis::ChangeUnit::Bytes) return fmt::format("{:.3f} MiB", v / 1048576.0);
  if (c.unit == analysis::ChangeUnit::Count) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3f}", std::fabs(v) < 5e-4 ? 0.0 : v);
}

std::string change_text(const RunChange& c) {
  if (!c.a || !c.b) return "";
  double d = *c.b - *c.a;
  // A change that prints as zero is zero: never "-0.000" nor "-0.0%".
  if (std::fabs(c.unit == analysis::ChangeUnit::Bytes ? d / 1048576.0 : d) < 5e-4) d = 0;
  std::string s = (d >= 0 ? "+" : "-") + shown(std::fabs(d), c);
  if (c.unit == analysis::ChangeUnit::Pct) return s + " pp";
  const double pct = *c.a != 0 ? 100 * d / std::fabs(*c.a) : 0.0;
  if (*c.a != 0)
    s += d != 0 && std::fabs(pct) < 0.05 ? std::string(" (<0.1%)") : fmt::format(" ({:+.1f}%)", d == 0 ? 0.0 : pct);
  return s;
}

const char* noise_key(Noise n) {
  switch (n) {
    case Noise::Beyond: return "beyond";
    case Noise::Within: return "within";
    case Noise::WithinFloor: return "within_floor";
    case Noise::WithinRuns: return "within_runs";
    case Noise::TooFew: return "too_few";
    case Noise::NoSpread: return "no_spread";
    case Noise::Missing: return "missing";
  }
  return "";
}

// The run-to-run noise a timing change cleared or not: "5% floor", "±12.345 between runs".
std::string run_noise_text(const RunChange& c) {
  if (c.run_noise == analysis::RunNoise::Floor) return fmt::format("the {:g}% floor", c.floor_pct);
  return fmt::format("±{} between runs", shown(c.run_bound, c));
}

std::string noise_text(const RunChange& c) {
  const char* what = c.per_step ? "steps" : "runs";
  const bool timing = c.run_noise != analysis::RunNoise::None;
  switch (c.noise) {
    case Noise::Beyond:
      return timing ? fmt::format("beyond noise (p {:.2g}; over {})", c.p, run_noise_text(c))
                    : fmt::format("beyond noise (p {:.2g})", c.p);
    case Noise::Within: return fmt::format("within noise (p {:.2g})", c.p);
    case Noise::WithinFloor:
      return c.per_step ? fmt::format("within noise: under {} (p {:.2g})", run_noise_text(c), c.p)
                        : fmt::format("within noise: under {} (one run a side)", run_noise_text(c));
    case Noise::WithinRuns: return fmt::format("within noise: {} (p {:.2g})", run_noise_text(c), c.p);
    case Noise::TooFew: return fmt::format("cannot tell: {} vs {} {}", c.a_samples.size(), c.b_samples.size(), what);
    case Noise::NoSpread:
      return *c.a == *c.b ? "same"
             : timing     ? fmt::format("changed (one run a side: over {})", run_noise_text(c))
                          : "changed (one run a side: no spread)";
    case Noise::Missing: return "";
  }
  return "";
}

// Whether the rank test ran (a per-step figure under the floor had it; a whole-run one, no spread, had none).
bool tested(const RunChange& c) {
  return c.noise == Noise::Beyond || c.noise == Noise::Within || c.noise == Noise::WithinRuns ||
         (c.noise == Noise::WithinFloor && c.per_step);
}

// The run-to-run noise of the whole diff, for the table's heading and the JSON.
bool floor_applies(const analysis::SidesDiff& d) { return d.runs_a == 1 && d.runs_b == 1; }

std::string spread(const std::vector<double>& v, const RunChange& c) {
  if (v.size() < 2) return "";
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return shown(*lo, c) + ".." + shown(*hi, c);
}

std::string verdict_key(metrics::Verdict v) {
  switch (v) {
    case metrics::Verdict::Effective: return "effective";
    case metrics::Verdict::NotEffective: return "not_effective";
    case metrics::Verdict::NotApplicable: return "not_applicable";
  }
  return "";
}

// A term's line: "FAIL  step_time>+5%: step_time_ms +12.0%, beyond noise (p 0.008)".
std::string gate_line(const GateResult& r, const analysis::SidesDiff& d) {
  const char* tag = r.outcome == GateOutcome::Fail ? "FAIL" : r.outcome == GateOutcome::Pass ? "pass" : "n/a ";
  std::string what;
  if (r.term.op == analysis::GateOp::Is)
    what = fmt::format("prefetch verdict {} in B ({} in A)", verdict_name(d.prefetch_b), verdict_name(d.prefetch_a));
  else if (r.outcome == GateOutcome::NotApplicable)
    what = r.change ? fmt::format("{}: {}", r.missing, in_side_na(*r.change)) : r.missing;
  else {
    const std::string v = !r.change_value ? "from 0"
                          : r.term.unit == analysis::GateUnit::Relative
                              ? fmt::format("{:+.1f}%", std::fabs(*r.change_value) < 0.05 ? 0.0 : *r.change_value)
                              : change_text(*r.change);
    what = fmt::format("{} {}, {}{}", r.change->key, v, r.crossed ? "past the threshold" : "within the threshold",
                       r.crossed ? ", " + noise_text(*r.change) : "");
  }
  return fmt::format("{}  {}: {}", tag, r.term.text, what);
}

}  // namespace

std::string in_side_na(const RunChange& c) {
  std::string s;
  if (!c.a) s += "A " + na_text(c.na_a, c.kind);
  if (!c.b) s += std::string(s.empty() ? "" : "; ") + "B " + na_text(c.na_b, c.kind);
  return s;
}

std::string diff_headline_text(const analysis::SidesDiff& d, const std::vector<GateResult>& gate, const DiffInputs& in,
                               bool markdown) {
  auto join = [](const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, " ")); };
  std::string text =
      fmt::format("{}shardscope diff: A = {} ({} run{}), B = {} ({} run{})\n", markdown ? "## " : "", join(in.a),
                  d.runs_a, d.runs_a == 1 ? "" : "s", join(in.b), d.runs_b, d.runs_b == 1 ? "" : "s");
  if (!gate.empty()) {
    const int rc = analysis::gate_exit_code(gate);
    const size_t failed = size_t(
        std::count_if(gate.begin(), gate.end(), [](const GateResult& r) { return r.outcome == GateOutcome::Fail; }));
    text += fmt::format("\ngate: {} ({} of {} thresholds crossed beyond the noise)\n",
                        rc == 1   ? "FAIL"
                        : rc == 2 ? "cannot judge"
                                  : "pass",
                        failed, gate.size());
    for (const GateResult& r : gate) text += (markdown ? "- " : "  ") + gate_line(r, d) + "\n";
  }
  text += fmt::format(
      "\nrun-level changes: medians over each side's steady steps (whole-run figures: over its "
      "runs); noise: Mann-Whitney rank test, p < {}; run to run: {}\n",
      analysis::kNoiseAlpha,
      floor_applies(d) ? fmt::format("one run a side, a timing change under the {:g}% floor is within it "
                                     "(--noise-floor)",
                                     d.rule.floor_pct)
                       : "Student's t over the runs' medians (the between-run spread)");
  Table t{{"figure", "A", "B", "B - A", "noise", "A spread", "B spread"}, {}, 1};
  NaNotes na;
  for (const RunChange& c : d.changes) {
    if (!c.a && !c.b && c.key != "step_time_ms" && c.key != "memory_peak_bytes") continue;
    t.rows.push_back({c.key, na.value_or(c.a ? shown(*c.a, c) : "", c.key, "", "in A " + na_text(c.na_a, c.kind)),
                      na.value_or(c.b ? shown(*c.b, c) : "", c.key, "", "in B " + na_text(c.na_b, c.kind)),
                      change_text(c), noise_text(c), spread(c.a_samples, c), spread(c.b_samples, c)});
  }
  t.rows.push_back({"prefetch_verdict", verdict_key(d.prefetch_a), verdict_key(d.prefetch_b),
                    d.prefetch_a == d.prefetch_b ? "same" : "changed", "", "", ""});
  text += t.render(markdown, markdown ? "" : "  ");
  for (const std::string& l : na.lines()) text += (markdown ? "" : "  ") + l + "\n";
  return text;
}

nlohmann::json diff_headline_json(const analysis::SidesDiff& d, const std::vector<GateResult>& gate,
                                  const DiffInputs& in) {
  nlohmann::json j = {{"schema", "shardscope.diff/2"},
                      {"inputs", {{"a", in.a}, {"b", in.b}}},
                      {"noise_test", {{"method", "mann_whitney"}, {"alpha", analysis::kNoiseAlpha}}}};
  j["noise_test"]["run_to_run"] = floor_applies(d) ? "floor" : "student_t_over_run_medians";
  if (floor_applies(d)) j["noise_test"]["floor_pct"] = d.rule.floor_pct;
  nlohmann::json& changes = j["changes"] = nlohmann::json::object();
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  for (const RunChange& c : d.changes) {
    nlohmann::json row = {{"a", opt(c.a)},
                          {"b", opt(c.b)},
                          {"change", c.a && c.b ? nlohmann::json(*c.b - *c.a) : nlohmann::json(nullptr)},
                          {"noise", noise_key(c.noise)},
                          {"p_value", tested(c) ? nlohmann::json(c.p) : nlohmann::json(nullptr)},
                          {"samples_from", c.per_step ? "steps" : "runs"},
                          {"a_samples", c.a_samples},
                          {"b_samples", c.b_samples}};
    if (c.run_noise == analysis::RunNoise::Floor) row["run_noise"] = {{"applied", "floor"}, {"floor_pct", c.floor_pct}};
    else if (c.run_noise == analysis::RunNoise::BetweenRuns)
      row["run_noise"] = {{"applied", "between_runs"},
                          {"a_run_medians", c.a_runs},
                          {"b_run_medians", c.b_runs},
                          {"change", c.run_change},
                          {"bound", c.run_bound}};
    if (!c.a) row["na_a"] = na_text(c.na_a, c.kind);
    if (!c.b) row["na_b"] = na_text(c.na_b, c.kind);
    changes[c.key] = row;
  }
  j["prefetch_verdict"] = {{"a", verdict_key(d.prefetch_a)}, {"b", verdict_key(d.prefetch_b)}};
  j["gate"] = nlohmann::json::array();
  for (const GateResult& r : gate) {
    const char* outcome = r.outcome == GateOutcome::Fail ? "fail" : r.outcome == GateOutcome::Pass ? "pass" : "n/a";
    j["gate"].push_back({{"term", r.term.text},
                         {"metric", r.term.op == analysis::GateOp::Is ? "prefetch_verdict"
                                    : r.change                        ? r.change->key
                                                                      : r.term.name},
                         {"outcome", outcome},
                         {"crossed", r.crossed},
                         {"change", opt(r.change_value)},
                         {"line", gate_line(r, d)}});
  }
  return j;
}

std::string diff_junit(const analysis::SidesDiff& d, const std::vector<GateResult>& gate) {
  auto xml = [](const std::string& s) {
    std::string o;
    for (char ch : s)
      o += ch == '<' ? "&lt;" : ch == '>' ? "&gt;" : ch == '&' ? "&amp;" : ch == '"' ? "&quot;" : std::string(1, ch);
    return o;
  };
  size_t failures = 0, errors = 0;
  std::string cases;
  for (const GateResult& r : gate) {
    cases += fmt::format("    <testcase classname=\"shardscope.diff\" name=\"{}\"", xml(r.term.text));
    if (r.outcome == GateOutcome::Pass) cases += "/>\n";
    else {
      const bool fail = r.outcome == GateOutcome::Fail;
      (fail ? failures : errors)++;
      cases += fmt::format(">\n      <{} message=\"{}\"/>\n    </testcase>\n", fail ? "failure" : "error",
                           xml(gate_line(r, d)));
    }
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"shardscope diff\" tests=\"{}\" "
      "failures=\"{}\" errors=\"{}\">\n{}  </testsuite>\n</testsuites>\n",
      gate.size(), failures, errors, cases);
}

}  // namespace shardscope::report
