// The one rendering of a diff (analysis/diff.h): a text table per rank pair, or JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analyzer/analysis/diff.h"

namespace shardscope::report {

std::string diff_text(const analysis::RunDiff& d, const std::string& a_path, const std::string& b_path);
nlohmann::json diff_json(const analysis::RunDiff& d, const std::string& a_path, const std::string& b_path);

}  // namespace shardscope::report
