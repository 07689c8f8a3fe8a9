#include "analyzer/analysis/summary_codec.h"

#include "analyzer/analysis/summary_fields.h"

namespace shardscope::analysis {

nlohmann::json encode(const report::RankReport& rank) { return rank; }
report::RankReport decode_rank_report(const nlohmann::json& j) { return j.get<report::RankReport>(); }

nlohmann::json encode(const RankSummary& s) {
  return {{"report", s.report},
          {"arrivals", s.arrivals},
          {"header", s.header},
          {"warnings", s.warnings},
          {"trace_bytes", s.trace_bytes}};
}

RankSummary decode_summary(const nlohmann::json& j) {
  RankSummary s;
  s.report = j.at("report").get<report::RankReport>();
  s.arrivals = j.at("arrivals").get<metrics::RankArrivals>();
  s.header = j.at("header").get<plugins::RankHeader>();
  s.warnings = j.at("warnings").get<std::vector<std::string>>();
  s.trace_bytes = j.at("trace_bytes").get<uint64_t>();
  return s;
}

}  // namespace shardscope::analysis
