// A rank's report as a self-describing value (nlohmann JSON, stored as CBOR, which keeps every double
// exactly, NaN and infinities included): what a summary file carries so that a report made from summaries
// is the report made from the traces, number for number.
#pragma once

#include <nlohmann/json.hpp>

#include "analyzer/analysis/report.h"

namespace shardscope::analysis {

nlohmann::json encode(const report::RankReport& rank);
// Throws nlohmann::json::exception when a field is missing or of the wrong type.
report::RankReport decode_rank_report(const nlohmann::json& j);

}  // namespace shardscope::analysis
