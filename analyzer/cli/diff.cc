#include "analyzer/cli/diff.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <ostream>
#include <stdexcept>

#include "analyzer/analysis/diff.h"
#include "analyzer/analysis/diff_gate.h"
#include "analyzer/cli/output.h"
#include "analyzer/cli/progress_line.h"
#include "analyzer/report/diff_gate_render.h"
#include "analyzer/report/diff_render.h"

namespace shardscope::cli {

bool split_sides(const std::vector<std::string>& runs, DiffArgs& args, std::ostream& err) {
  const auto at = std::find(runs.begin(), runs.end(), kSideBreak);
  const bool two = at == runs.end() && runs.size() == 2;
  if (!two && (at == runs.end() || at == runs.begin() || at + 1 == runs.end() ||
               std::find(at + 1, runs.end(), kSideBreak) != runs.end())) {
    print_error(err, "diff: give two runs (A B), or each side's runs as A1 A2 -- B1 B2");
    return false;
  }
  args.a.assign(runs.begin(), two ? runs.begin() + 1 : at);
  args.b.assign(two ? runs.begin() + 1 : at + 1, runs.end());
  return true;
}

namespace {

// "--noise-floor 5%" (or "5"): a percentage, 0 or more; nullopt when it is not one.
std::optional<double> parse_floor(const std::string& s) {
  std::string t = s;
  if (!t.empty() && t.back() == '%') t.pop_back();
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != t.size() || t.empty() || !(v >= 0 && std::isfinite(v))) return std::nullopt;
  return v;
}

}  // namespace

int diff(const DiffArgs& args, std::ostream& out, std::ostream& err, const plugins::ReadRules& rules) {
  std::vector<analysis::GateTerm> terms;
  try {
    if (!args.fail_on.empty()) terms = analysis::parse_gate(args.fail_on);
  } catch (const std::invalid_argument& e) {
    print_error(err, e.what());
    return 2;
  }
  analysis::NoiseRule rule;
  if (!args.noise_floor.empty()) {
    const std::optional<double> floor = parse_floor(args.noise_floor);
    if (!floor) {
      print_error(err,
                  "--noise-floor: '" + args.noise_floor.substr(0, 40) + "' is not a percentage of 0 or more (e.g. 5%)");
      return 2;
    }
    rule.floor_pct = *floor;
  }
  return guarded(err, [&] {
    std::vector<analysis::AnalysedRun> a, b;
    {
      ProgressLine progress;
      const plugins::LoadOptions opts{.on_progress = progress.callback(), .rules = rules};
      for (const std::string& p : args.a)
        a.push_back(analysis::analyse_stream({p}, opts, analysis::Scope::Everything, true));
      for (const std::string& p : args.b)
        b.push_back(analysis::analyse_stream({p}, opts, analysis::Scope::Everything, true));
    }
    std::vector<const analysis::AnalysedRun*> pa, pb;
    for (const auto& r : a) print_warnings(r.warnings, err), pa.push_back(&r);
    for (const auto& r : b) print_warnings(r.warnings, err), pb.push_back(&r);
    // The per-rank tables compare each side's first run.
    const analysis::RunDiff d = analysis::diff_runs(a.front(), b.front());
    if (d.ranks.empty()) {
      print_error(err, "the two runs have no rank in common");
      return 2;
    }
    const analysis::SidesDiff sides = analysis::diff_sides(pa, pb, rule);
    const std::vector<analysis::GateResult> gate = analysis::evaluate_gate(terms, sides);
    const report::DiffInputs in{args.a, args.b};
    const std::string& a0 = args.a.front();
    const std::string& b0 = args.b.front();
    const Result result{.text =
                            [&](bool md) {
                              std::string t = report::diff_headline_text(sides, gate, in, md);
                              if (args.ranks || args.units) {
                                std::string r = report::diff_text(d, a0, b0, args.units);
                                t += r.substr(r.find('\n') + 1);  // its own first line says the inputs again
                              }
                              return t;
                            },
                        .json =
                            [&] {
                              nlohmann::json j = report::diff_headline_json(sides, gate, in);
                              if (args.ranks || args.units)
                                j["ranks"] = report::diff_json(d, a0, b0, args.units)["ranks"];
                              return j;
                            },
                        .junit = [&] { return report::diff_junit(sides, gate); }};
    if (!write_result(args.format == "markdown" ? "md" : args.format, result, args.output, out, err)) return 2;
    return terms.empty() ? 0 : analysis::gate_exit_code(gate);
  });
}

}  // namespace shardscope::cli
