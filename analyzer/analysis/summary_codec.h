// A rank's report as a self-describing value (nlohmann JSON, stored as CBOR, which keeps every double
// exactly, NaN and infinities included): what a summary file carries so that a report made from summaries
// is the report made from the traces, number for number.
#pragma once

#include <nlohmann/json.hpp>

#include "analyzer/analysis/report.h"
#include "analyzer/analysis/summary.h"

namespace shardscope::analysis {

nlohmann::json encode(const report::RankReport& rank);
// Throws nlohmann::json::exception when a field is missing or of the wrong type.
report::RankReport decode_rank_report(const nlohmann::json& j);

// A whole summary, for sending between processes (MPI): everything the reduce and the loader's checks use
// (not the per-instance records or device time, which only summary files and `diff` carry).
nlohmann::json encode(const RankSummary& summary);
RankSummary decode_summary(const nlohmann::json& j);

}  // namespace shardscope::analysis
