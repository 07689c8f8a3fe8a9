// The run summary (analysis/run_summary.h) as it opens every report: lines of text (also the markdown list
// and the HTML list) and a JSON object. Sentences are made here, from the summary's codes.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/analysis/run_summary.h"

namespace shardscope::report {

std::vector<std::string> summary_lines(const analysis::RunSummary& s);
nlohmann::json summary_json(const analysis::RunSummary& s);

}  // namespace shardscope::report
