#include "analyzer/report/prefetch_render.h"
#include "analyzer/report/definitions.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "analyzer/report/prefetch_keys.h"
#include "analyzer/report/report_keys.h"
#include "model/saturating.h"
#include "tracer/format/keys.h"

namespace shardscope::report {
namespace {

using metrics::Cause;
using metrics::NotApplicable;
using metrics::Verdict;
using model::sat_sub;
using nlohmann::json;

// A duration in a sentence, in the unit that fits: "304.8 ms", not "304790.7 µs".
std::string us(int64_t ns) {
  return std::llabs(ns) >= 1'000'000 ? fmt::format("{:.1f} ms", double(ns) / 1e6)
                                     : fmt::format("{:.1f} µs", double(ns) / 1e3);
}
std::string ms(int64_t ns) { return fmt::format("{:.2f} ms", double(ns) / 1e6); }

std::string limit_text(const metrics::RankPrefetch& p) { return p.limit ? fmt::format(" = {}", *p.limit) : ""; }

// The cause of a step that is not effective, with the pair that shows it best.
std::string cause_sentence(const metrics::StepPrefetch& s, const metrics::RankPrefetch& p) {
  const metrics::UnitPrefetch* u = s.example();
  const size_t n = s.units.size(), k = s.count(s.cause);
  const std::string hidden = fmt::format("{:.0f}% of backward all-gather time hidden", 100 * s.hidden_share());
  switch (s.cause) {
    case Cause::IssuedLate:
      return fmt::format(
          "issued late: {} of {} all-gathers were issued only after the backward compute they should hide had begun "
          "(unit {}'s, {} after "
          "unit {}'s backward compute began)",
          k, n, u->next_unit, us(model::sat_neg(u->issue_lead_ns)), u->unit);
    case Cause::Throttled:
      return fmt::format(
          "throttled by the rate limiter (limit_all_gathers{}): {} of {} all-gathers waited for an earlier all-gather "
          "to complete before "
          "they could be issued (unit {}'s: {}); {}",
          limit_text(p), k, n, u->next_unit,
          u->issue_lead_ns >= 0 ? "issue lead " + us(u->issue_lead_ns)
                                : fmt::format("issued {} after unit {}'s backward compute began",
                                              us(model::sat_neg(u->issue_lead_ns)), u->unit),
          hidden);
    case Cause::QueuedBehindReduceScatter:
      return fmt::format(
          "queued behind a reduce-scatter: {} of {} all-gathers were issued in time but ran only after a "
          "reduce-scatter on their own stream "
          "(unit {}'s waited {}); {}",
          k, n, u->next_unit, us(u->queued_ns), hidden);
    case Cause::LatePeer:
      return fmt::format(
          "a late peer: rank {} arrived at {} of {} all-gathers late (unit {}'s: {} after this rank), so they could "
          "not finish under the "
          "compute; {}",
          u->late_peer, k, n, u->next_unit, us(u->late_peer_ns), hidden);
    case Cause::StartedLate:
      return fmt::format(
          "started late: {} of {} all-gathers were issued in time but started only after the compute they should hide "
          "had ended "
          "(unit {}'s started {} after its issue, not behind a reduce-scatter); {}",
          k, n, u->next_unit, us(u->queued_ns), hidden);
    case Cause::NoComputeUnderIt:
      return fmt::format(
          "no compute under it: {} of {} all-gathers were issued in time and were shorter than the compute they should "
          "hide, but ran "
          "before it began (unit {}'s ran {} of its {} before unit {}'s backward compute started, {} after the issue)",
          k, n, u->next_unit,
          us(std::max<int64_t>(0, sat_sub(std::min(u->ag_end_ns, u->compute_start_ns), u->ag_start_ns))), us(u->ag_ns),
          u->unit, us(u->issue_lead_ns), hidden);
    case Cause::LongerThanCompute:
      return fmt::format(
          "all-gather longer than the compute it should hide: {} of {} all-gathers were issued in time and ran at "
          "once, but outlasted the "
          "backward compute under them (unit {}'s: {} against {} of compute); {}",
          k, n, u ? u->next_unit : -1, u ? us(u->ag_ns) : "?",
          u ? us(sat_sub(u->compute_end_ns, u->compute_start_ns)) : "?", hidden);
    case Cause::None: break;
  }
  return hidden;
}

json ref_json(const metrics::EventRef& r, int64_t start, int64_t end) {
  namespace pk = prefetch_keys;
  return {{pk::kTrack, r.track}, {pk::kIndex, r.index}, {pk::kStartNs, start}, {pk::kEndNs, end}};
}

}  // namespace

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Effective: return "effective";
    case Verdict::NotEffective: return "not effective";
    case Verdict::NotApplicable: return "n/a";
  }
  return "?";
}

std::string cause_name(Cause c) {
  switch (c) {
    case Cause::None: return "";
    case Cause::IssuedLate: return "issued late";
    case Cause::Throttled: return "rate limiter";
    case Cause::QueuedBehindReduceScatter: return "behind reduce-scatter";
    case Cause::LatePeer: return "late peer";
    case Cause::StartedLate: return "started late";
    case Cause::LongerThanCompute: return "longer than compute";
    case Cause::NoComputeUnderIt: return "no compute under it";
  }
  return "?";
}

std::string na_sentence(NotApplicable na, size_t count) {
  switch (na) {
    case NotApplicable::None: return "";
    case NotApplicable::NoUnitCompute:
      return "no per-unit backward compute in this trace (no \"unit_backward\" ranges, no FSDP labels)";
    case NotApplicable::NoUnitAllGathers:
      return "no all-gathers tagged with their unit: nothing is re-gathered for backward (NO_SHARD or SHARD_GRAD_OP), "
             "or the trace does not say which "
             "unit each all-gather is for";
    case NotApplicable::FewerThanTwoUnits:
      return fmt::format("{} unit(s) re-gathered for backward in this step; a prefetch needs two", count);
    case NotApplicable::NoBackwardAllGather:
      return fmt::format("none of the {} unit pairs of this step has a backward all-gather", count);
  }
  return "?";
}

int64_t step_window_ns(const std::vector<StepRow>& steps, int64_t number) {
  for (const StepRow& r : steps)
    if (r.step.number == number) return sat_sub(r.step.end_ns, r.step.start_ns);
  return 0;
}

std::string step_sentence(const metrics::StepPrefetch& s, const metrics::RankPrefetch& p, int64_t step_ns) {
  std::string out;
  if (s.verdict == Verdict::NotApplicable) out = "n/a: " + na_sentence(s.na, s.na_count);
  else if (s.verdict == Verdict::Effective)
    out = fmt::format(
        "effective: all {} backward all-gathers issued in prefetch order; {:.0f}% of their time hidden behind compute",
        s.units.size(), 100 * s.hidden_share());
  else
    out = "not effective: " + cause_sentence(s, p);
  if (s.missing_pairs) out += fmt::format(" ({} unit pair(s) had no backward all-gather)", s.missing_pairs);
  // Launched a whole step before it could start: the launch queue, not the all-gather, is what is long.
  const auto most_queued = std::max_element(s.units.begin(), s.units.end(),
                                            [](const auto& a, const auto& b) { return a.queued_ns < b.queued_ns; });
  if (step_ns > 0 && most_queued != s.units.end() && most_queued->queued_ns > step_ns)
    out += fmt::format(
        " [the host runs ahead of the GPU: unit {}'s all-gather was queued {} from its launch to its start, longer "
        "than the step's {}; that is the host being ahead, not the all-gather waiting]",
        most_queued->next_unit, us(most_queued->queued_ns), us(step_ns));
  if (s.warm_up) out += " [warm-up: left out of the run's verdict]";
  if (s.aborted) out += " [aborted: did not complete; left out of the run's verdict]";
  return out;
}

std::string run_sentence(const metrics::RankPrefetch& p) {
  const size_t steady = p.steady_effective + p.steady_not_effective;
  const bool warm = !p.steps.empty() && p.steps.front().warm_up;
  if (p.na != NotApplicable::None) return "n/a: " + na_sentence(p.na, 0);
  if (steady == 0) return warm ? "n/a: only the warm-up step could be checked" : "n/a: no step could be checked";
  std::string out =
      fmt::format("{}: {} of {} steady-state step(s) effective", verdict_name(p.verdict), p.steady_effective, steady);
  if (p.steady_effective == p.steady_not_effective)
    out += fmt::format(", a tie: {:.0f}% of their backward all-gather time hidden", 100 * p.steady_hidden_share());
  if (warm) out += fmt::format(" (step {} left out as warm-up)", p.steps.front().step);
  return out;
}

Table unit_table(const metrics::StepPrefetch& s) {
  Table t{{"unit i", "AG of unit", "issue lead µs", "hidden %", "exposed wait µs", "queued µs", "cause", "late peer"},
          {},
          0};
  for (const metrics::UnitPrefetch& u : s.units)
    t.rows.push_back({std::to_string(u.unit), std::to_string(u.next_unit), fmt::format("{:.1f}", u.issue_lead_ns / 1e3),
                      fmt::format("{:.0f}", 100 * u.hidden_share()), fmt::format("{:.1f}", u.exposed_wait_ns / 1e3),
                      fmt::format("{:.1f}", u.queued_ns / 1e3), u.cause == Cause::None ? "-" : cause_name(u.cause),
                      u.late_peer >= 0 ? fmt::format("rank {} +{}", u.late_peer, ms(u.late_peer_ns)) : "-"});
  return t;
}

std::string unit_identity_sentence(model::UnitIdentity id) {
  switch (id) {
    case model::UnitIdentity::Named: return "named by the trace";
    case model::UnitIdentity::InferredFromOrder:
      return "inferred from order, not named: PyTorch FSDP1's labels (FullyShardedDataParallel._pre_forward, "
             "._pre_backward_hook, ...) name no "
             "module, so unit k is the k-th FSDP1 pre-forward of a step (unit 0 the root) and backward follows the "
             "reverse post-forward order";
  }
  return "";
}

std::string prefetch_text(const metrics::RankPrefetch& p, const std::string& source, bool markdown, bool units_tables,
                          const std::vector<StepRow>& steps) {
  std::string out =
      fmt::format("rank {}{}: backward prefetch configured {}: {}\n", p.rank, source.empty() ? "" : " (" + source + ")",
                  p.configured.empty() ? "unknown" : p.configured, run_sentence(p));
  if (p.unit_identity != model::UnitIdentity::Named)
    out += "  units: " + unit_identity_sentence(p.unit_identity) + "\n";
  if (p.forward_throttled)
    out += fmt::format(
        "  forward: {} of {} forward all-gathers were throttled by the rate limiter (limit_all_gathers{})\n",
        p.forward_throttled, p.forward_all_gathers, limit_text(p));
  std::string units_legend;
  for (const metrics::StepPrefetch& s : p.steps) {
    out += fmt::format("  step {}: {}\n", s.step, step_sentence(s, p, step_window_ns(steps, s.step)));
    if (units_tables && !s.units.empty()) {
      const Table t = unit_table(s);
      out += t.render(markdown, "    ");
      units_legend = legend(t.header, "  ");
    }
  }
  out += units_legend;
  return out;
}

json prefetch_json(const metrics::RankPrefetch& p, const std::vector<StepRow>& steps) {
  namespace k = report::report_keys;
  namespace pk = prefetch_keys;
  json o;
  o[k::kRank] = p.rank;
  o[k::kConfigured] = p.configured.empty() ? json(nullptr) : json(p.configured);
  o[k::kVerdict] = verdict_name(p.verdict);
  o[pk::kRule] = run_rule(has_warm_up(p));
  o[k::kReason] = run_sentence(p);
  if (p.na != NotApplicable::None) o[pk::kNotApplicable] = na_sentence(p.na, 0);
  if (p.unit_identity != model::UnitIdentity::Named) o[k::kUnitIdentity] = unit_identity_sentence(p.unit_identity);
  o[pk::kLimit] = p.limit ? json(*p.limit) : json(nullptr);
  o[pk::kForwardAllGathers] = p.forward_all_gathers;
  o[pk::kForwardThrottled] = p.forward_throttled;
  o[pk::kSteadyEffective] = p.steady_effective;
  o[pk::kSteadyNotEffective] = p.steady_not_effective;
  o[pk::kSteadyHiddenShare] = p.steady_hidden_share();
  o[k::kSteps] = json::array();
  for (const metrics::StepPrefetch& s : p.steps) {
    json so{{k::kStep, s.step},
            {pk::kWarmUp, s.warm_up},
            {k::kVerdict, verdict_name(s.verdict)},
            {k::kReason, step_sentence(s, p, step_window_ns(steps, s.step))},
            {pk::kCause, s.cause == Cause::None ? json(nullptr) : json(cause_name(s.cause))},
            {k::kHiddenShare, s.hidden_share()},
            {k::kExposedWaitNs, s.exposed_wait_ns},
            {pk::kMissingPairs, s.missing_pairs}};
    if (s.na != NotApplicable::None) so[pk::kNotApplicable] = na_sentence(s.na, s.na_count);
    if (s.aborted) so[k::kAborted] = true;
    so[k::kUnits] = json::array();
    for (const metrics::UnitPrefetch& u : s.units) {
      json uo{{k::kUnit, u.unit},
              {k::kNextUnit, u.next_unit},
              {k::kIssueLeadNs, u.issue_lead_ns},
              {k::kHiddenShare, u.hidden_share()},
              {k::kExposedWaitNs, u.exposed_wait_ns},
              {k::kAllGatherNs, u.ag_ns},
              {pk::kQueuedNs, u.queued_ns},
              {k::kSerializedBehindRs, u.serialized_behind_rs},
              {k::kThrottled, u.throttled},
              {pk::kCause, u.cause == Cause::None ? json(nullptr) : json(cause_name(u.cause))},
              {pk::kLatePeer, u.late_peer >= 0 ? json(u.late_peer) : json(nullptr)},
              {pk::kLatePeerNs, u.late_peer_ns}};
      uo[pk::kEvidence] = {
          {pk::kCompute, ref_json(u.compute, u.compute_start_ns, u.compute_end_ns)},
          {pk::kNextCompute, ref_json(u.next_compute, u.next_compute_start_ns, u.next_compute_start_ns)},
          {pk::kAllGather, ref_json(u.all_gather, u.ag_start_ns, u.ag_end_ns)}};
      uo[pk::kEvidence][pk::kAllGather][pk::kIssuedNs] = u.issued_ns;
      uo[pk::kEvidence][pk::kCompute][pk::kIssuedNs] = u.compute_issued_ns;
      if (u.reduce_scatter.valid())
        uo[pk::kEvidence][pk::kReduceScatter] = {{pk::kTrack, u.reduce_scatter.track},
                                                 {pk::kIndex, u.reduce_scatter.index}};
      so[k::kUnits].push_back(uo);
    }
    o[k::kSteps].push_back(so);
  }
  return o;
}

std::string run_rule(bool warm_up_left_out) {
  return std::string(warm_up_left_out ? "step 0 (the job's first, its warm-up) is left out; " : "") +
         "the run is effective when more than half of the " + (warm_up_left_out ? "remaining " : "") +
         "steps are, and on a tie when at least half of their backward all-gather time is hidden";
}

bool has_warm_up(const metrics::RankPrefetch& p) {
  return std::any_of(p.steps.begin(), p.steps.end(), [](const metrics::StepPrefetch& s) { return s.warm_up; });
}

}  // namespace shardscope::report
