#include "analyzer/analysis/diff_gate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace shardscope::analysis {
namespace {

const char* const kStems[] = {"step_time", "comm", "exposed_comm", "idle", "memory_peak"};
const char* const kKindFigures[] = {"_count", "_time", "_busbw"};
const char* const kUnitSuffixes[] = {"_ms", "_pct", "_bytes", "_gbps", ""};

bool known_name(const std::string& name) {
  auto stem_known = [](const std::string& stem) {
    for (const char* s : kStems)
      if (stem == s) return true;
    for (int k = int(model::CollectiveKind::None) + 1; k <= int(model::kLastCollectiveKind); ++k)
      for (const char* f : kKindFigures)
        if (stem == std::string(model::to_string(model::CollectiveKind(k))) + f) return true;
    return false;
  };
  for (const char* suffix : kUnitSuffixes) {
    const std::string sfx(suffix);
    if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0 &&
        stem_known(name.substr(0, name.size() - sfx.size())))
      return true;
  }
  return false;
}

[[noreturn]] void bad(const std::string& term, const std::string& why) {
  throw std::invalid_argument(fmt::format("--fail-on: bad term '{}': {}", term.substr(0, 80), why));
}

// "+512MiB" → 512 × 2^20 bytes, "+5%" → 5 relative, "+2pp" → 2 points, "+3ms", "+1.5GB/s", "+2".
void parse_threshold(const std::string& term, const std::string& text, GateTerm& t) {
  char* end = nullptr;
  t.value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(t.value)) bad(term, "the threshold must start with a number, e.g. +5%");
  const std::string unit(end);
  struct Unit {
    const char* text;
    GateUnit unit;
    double scale;
  };
  static const Unit units[] = {{"%", GateUnit::Relative, 1},
                               {"pp", GateUnit::Points, 1},
                               {"ms", GateUnit::Ms, 1},
                               {"B", GateUnit::Bytes, 1},
                               {"KiB", GateUnit::Bytes, 1024.0},
                               {"MiB", GateUnit::Bytes, 1048576.0},
                               {"GiB", GateUnit::Bytes, 1073741824.0},
                               {"KB", GateUnit::Bytes, 1e3},
                               {"MB", GateUnit::Bytes, 1e6},
                               {"GB", GateUnit::Bytes, 1e9},
                               {"GB/s", GateUnit::Gbps, 1},
                               {"", GateUnit::Plain, 1}};
  for (const Unit& u : units)
    if (unit == u.text) {
      t.unit = u.unit, t.value *= u.scale;
      return;
    }
  bad(term,
      fmt::format("unknown unit '{}' (%, pp, ms, B, KiB, MiB, GiB, KB, MB, GB, GB/s or none)", unit.substr(0, 20)));
}

// Whether a threshold in `u` can be set on a figure in `c`'s unit.
bool fits(GateUnit u, ChangeUnit c) {
  switch (u) {
    case GateUnit::Relative: return c != ChangeUnit::Pct;
    case GateUnit::Points: return c == ChangeUnit::Pct;
    case GateUnit::Ms: return c == ChangeUnit::Ms;
    case GateUnit::Bytes: return c == ChangeUnit::Bytes;
    case GateUnit::Gbps: return c == ChangeUnit::Gbps;
    case GateUnit::Plain: return true;
  }
  return false;
}

// The figure a term names: its key, or its stem with the threshold's unit choosing between figures that share
// it (exposed_comm: exposed_comm_ms with ms or %, exposed_comm_pct with pp).
const RunChange* find_change(const GateTerm& t, const SidesDiff& d) {
  for (const RunChange& c : d.changes)
    if (c.key == t.name) return &c;
  for (const RunChange& c : d.changes)
    if (key_stem(c) == t.name && fits(t.unit, c.unit)) return &c;
  return nullptr;
}

}  // namespace

std::vector<GateTerm> parse_gate(const std::string& expr) {
  std::vector<GateTerm> terms;
  size_t start = 0;
  while (start <= expr.size()) {
    size_t comma = expr.find(',', start);
    if (comma == std::string::npos) comma = expr.size();
    std::string term = expr.substr(start, comma - start);
    term.erase(0, term.find_first_not_of(' '));
    term.erase(term.find_last_not_of(' ') + 1);
    start = comma + 1;
    if (term.empty()) bad(term, "empty (two commas, or a comma at an end)");
    const size_t op = term.find_first_of("<>=");
    if (op == std::string::npos || op == 0) bad(term, "expected NAME>THRESHOLD, NAME<THRESHOLD or prefetch=VERDICT");
    GateTerm t{.text = term, .name = term.substr(0, op)};
    t.name.erase(t.name.find_last_not_of(' ') + 1);
    std::string rhs = term.substr(op + 1);
    rhs.erase(0, rhs.find_first_not_of(' '));
    if (term[op] == '=') {
      if (t.name != "prefetch" && t.name != "prefetch_verdict") bad(term, "only the prefetch verdict takes '='");
      t.op = GateOp::Is;
      if (rhs == "not_effective") t.verdict = metrics::Verdict::NotEffective;
      else if (rhs == "effective")
        t.verdict = metrics::Verdict::Effective;
      else if (rhs == "not_applicable")
        t.verdict = metrics::Verdict::NotApplicable;
      else
        bad(term, "the prefetch verdict is effective, not_effective or not_applicable");
    } else {
      if (!known_name(t.name))
        bad(term, fmt::format("no figure named '{}' (docs/diff.md lists them)", t.name.substr(0, 40)));
      t.op = term[op] == '>' ? GateOp::Above : GateOp::Below;
      parse_threshold(term, rhs, t);
    }
    terms.push_back(std::move(t));
    if (comma == expr.size()) break;
  }
  return terms;
}

std::vector<GateResult> evaluate_gate(const std::vector<GateTerm>& terms, const SidesDiff& d) {
  std::vector<GateResult> out;
  for (const GateTerm& t : terms) {
    GateResult r{.term = t};
    if (t.op == GateOp::Is) {
      r.crossed = d.prefetch_b == t.verdict;
      r.outcome = r.crossed ? GateOutcome::Fail : GateOutcome::Pass;
    } else if (!(r.change = find_change(t, d))) {
      r.outcome = GateOutcome::NotApplicable;
      r.missing = fmt::format("{} is in neither run, or the threshold's unit does not fit it", t.name);
    } else if (!fits(t.unit, r.change->unit)) {
      r.outcome = GateOutcome::NotApplicable;
      r.missing = fmt::format("{} cannot take this unit", r.change->key);
    } else if (!r.change->a || !r.change->b) {
      r.outcome = GateOutcome::NotApplicable;
      r.missing = r.change->key;
    } else {
      const double a = *r.change->a, b = *r.change->b;
      if (t.unit == GateUnit::Relative)
        r.change_value = a != 0   ? std::optional<double>(100 * (b - a) / std::fabs(a))
                         : b == 0 ? std::optional<double>(0.0)
                                  : std::nullopt;
      else
        r.change_value = b - a;
      r.crossed = !r.change_value || (t.op == GateOp::Above ? *r.change_value > t.value : *r.change_value < t.value);
      if (!r.change_value && t.op == GateOp::Below) r.crossed = false;  // from zero, a relative fall is none
      r.outcome = r.crossed && r.change->beyond_noise() ? GateOutcome::Fail : GateOutcome::Pass;
    }
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const GateResult& x, const GateResult& y) { return int(x.outcome) < int(y.outcome); });
  return out;
}

int gate_exit_code(const std::vector<GateResult>& results) {
  int rc = 0;
  for (const GateResult& r : results)
    if (r.outcome == GateOutcome::Fail) return 1;
    else if (r.outcome == GateOutcome::NotApplicable)
      rc = 2;
  return rc;
}

}  // namespace shardscope::analysis
