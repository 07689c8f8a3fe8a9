// `diff --fail-on`: thresholds on the run-level changes (diff_run.h), e.g.
// "step_time>+5%,exposed_comm>+2pp,memory_peak>+512MiB,prefetch=not_effective". A term names a figure by its
// JSON key or by the key without its unit ("step_time" for "step_time_ms"); it fails when B crosses it and the
// change is beyond the noise. The table of names is docs/diff.md's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/analysis/diff_run.h"

namespace shardscope::analysis {

enum class GateOp { Above, Below, Is };  // >, <, = (the prefetch verdict only)
// How a threshold is written: a relative change (%), percentage points (pp, the _pct figures), or an absolute
// change in the figure's own unit (ms, bytes with B/KiB/MiB/GiB/KB/MB/GB, GB/s, or a bare number).
enum class GateUnit { Relative, Points, Ms, Bytes, Gbps, Plain };

struct GateTerm {
  std::string text;  // as written, for the output
  std::string name;  // the figure's name as written
  GateOp op = GateOp::Above;
  double value = 0;  // in the unit (bytes for a size)
  GateUnit unit = GateUnit::Plain;
  metrics::Verdict verdict = metrics::Verdict::NotEffective;  // GateOp::Is
};

// The terms of a --fail-on expression, in order. Throws std::invalid_argument naming the first bad term and
// what is wrong with it, before any trace is read.
std::vector<GateTerm> parse_gate(const std::string& expr);

enum class GateOutcome { Fail, Pass, NotApplicable };

struct GateResult {
  GateTerm term;
  const RunChange* change = nullptr;  // the figure it judged (null for the prefetch verdict, or none found)
  GateOutcome outcome = GateOutcome::Pass;
  bool crossed = false;                // B is past the threshold, noise aside
  std::optional<double> change_value;  // in the threshold's unit: % for Relative, the figure's unit otherwise
  std::string missing;                 // NotApplicable: the figure the runs lack
};

// Every term judged, the failing ones first (then passing, then not applicable), each group in the order written.
std::vector<GateResult> evaluate_gate(const std::vector<GateTerm>& terms, const SidesDiff& d);

// diff's exit status: 1 when a term fails, else 2 when one could not be judged, else 0.
int gate_exit_code(const std::vector<GateResult>& results);

}  // namespace shardscope::analysis
