// `diff`'s answer first: the run-level changes (analysis/diff_run.h) with their noise, and the --fail-on
// thresholds (analysis/diff_gate.h), as text, markdown (a CI job summary), JSON and JUnit XML.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/analysis/diff_gate.h"

namespace shardscope::report {

// "A n/a: ...; B n/a: ...": why a figure is missing on a side.
std::string in_side_na(const analysis::RunChange& c);

struct DiffInputs {
  std::vector<std::string> a, b;  // each side's runs as given
};

// The gate's lines (failing first) when there are terms, then the run-level table.
std::string diff_headline_text(const analysis::SidesDiff& d, const std::vector<analysis::GateResult>& gate,
                               const DiffInputs& in, bool markdown);
// {"schema": "shardscope.diff/2", "inputs", "changes": {key: {...}}, "prefetch_verdict", "gate": [...]}.
nlohmann::json diff_headline_json(const analysis::SidesDiff& d, const std::vector<analysis::GateResult>& gate,
                                  const DiffInputs& in);
// One <testcase> a threshold: a <failure> when it fails, an <error> when it could not be judged.
std::string diff_junit(const analysis::SidesDiff& d, const std::vector<analysis::GateResult>& gate);

}  // namespace shardscope::report
