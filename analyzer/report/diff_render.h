// The one rendering of a diff (analysis/diff.h): a text table per rank pair, or JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analyzer/analysis/diff.h"

namespace shardscope::report {

// `units`: with the rows of each FSDP unit's hidden all-gather share (diff --units).
std::string diff_text(const analysis::RunDiff& d, const std::string& a_path, const std::string& b_path,
                      bool units = true);
nlohmann::json diff_json(const analysis::RunDiff& d, const std::string& a_path, const std::string& b_path,
                         bool units = true);

}  // namespace shardscope::report
