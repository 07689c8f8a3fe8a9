#include "analyzer/cli/check_prefetch.h"

#include <ostream>

#include <fmt/format.h>

#include "analyzer/cli/output.h"
#include "analyzer/metrics/prefetch.h"
#include "analyzer/report/render.h"
#include "analyzer/report/table.h"
#include "plugins/load/load.h"
#include "tracer/format/error.h"
#include "tracer/format/keys.h"

namespace shardscope::cli {

int check_prefetch(const std::vector<std::string>& paths, const std::string& format, std::ostream& out, std::ostream& err) {
  namespace k = keys::report;
  try {
    std::vector<std::filesystem::path> in(paths.begin(), paths.end());
    plugins::LoadResult loaded = plugins::load(in, {.progress = true});
    print_warnings(loaded.warnings, err);
    bool any_effective = false, any_not = false;
    nlohmann::json j = nlohmann::json::array();
    std::string text;
    for (const model::Rank& rank : loaded.trace.ranks) {
      metrics::RankPrefetch p = metrics::check_prefetch(rank);
      metrics::Verdict v = p.verdict();
      any_effective |= v == metrics::Verdict::Effective;
      any_not |= v == metrics::Verdict::NotEffective;
      nlohmann::json rj = {{k::kRank, p.rank}, {k::kConfigured, p.configured}, {k::kVerdict, report::verdict_name(v)}};
      text += fmt::format("rank {} ({}): backward prefetch configured {}: {}\n", p.rank, rank.source, p.configured.empty() ? "unknown" : p.configured,
                          p.not_applicable.empty() ? report::verdict_name(v) : p.not_applicable);
      if (!p.not_applicable.empty()) rj[k::kReason] = p.not_applicable;
      if (!p.unit_identity.empty()) {
        rj[k::kUnitIdentity] = p.unit_identity;
        text += "  units: " + p.unit_identity + "\n";
      }
      rj[k::kSteps] = nlohmann::json::array();
      for (const metrics::StepPrefetch& s : p.steps) {
        text += fmt::format("  step {}: {}: {}\n", s.step, report::verdict_name(s.verdict), s.reason);
        report::Table t{{"unit i", "AG of unit", "issue lead µs", "hidden %", "exposed wait µs", "queued µs", "behind RS", "throttled"}, {}, 0};
        nlohmann::json units = nlohmann::json::array();
        for (const metrics::UnitPrefetch& u : s.units) {
          t.rows.push_back({std::to_string(u.unit), std::to_string(u.next_unit), fmt::format("{:.1f}", u.issue_lead_ns / 1e3), fmt::format("{:.0f}", 100 * u.hidden_share()),
                            fmt::format("{:.1f}", u.exposed_wait_ns / 1e3), fmt::format("{:.1f}", u.queued_ns / 1e3), u.serialized_behind_rs ? "yes" : "no",
                            u.throttled ? "yes" : "no"});
          units.push_back({{k::kUnit, u.unit}, {k::kNextUnit, u.next_unit}, {k::kIssueLeadNs, u.issue_lead_ns}, {k::kHiddenShare, u.hidden_share()},
                           {k::kExposedWaitNs, u.exposed_wait_ns}, {k::kSerializedBehindRs, u.serialized_behind_rs},
                           {k::kThrottled, u.throttled}});
        }
        if (!t.rows.empty()) text += t.render(false, "    ");
        rj[k::kSteps].push_back({{k::kStep, s.step}, {k::kVerdict, report::verdict_name(s.verdict)}, {k::kReason, s.reason}, {k::kUnits, units}});
      }
      j.push_back(rj);
    }
    int rc = any_not ? 1 : any_effective ? 0 : 2;
    if (rc == 2) err << "shardscope: check-prefetch: nothing to check: no rank has backward all-gathers tagged with their FSDP unit\n";
    if (format == "json") text = nlohmann::json{{k::kRanks, j}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    else text += fmt::format("verdict: {}\n", rc == 0 ? "effective" : rc == 1 ? "NOT effective" : "n/a");
    if (!write_output("-", text, out, err)) return 2;
    return rc;
  } catch (const std::exception& e) {
    err << "shardscope: error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace shardscope::cli
