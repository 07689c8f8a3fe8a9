#include "analyzer/metrics/prefetch.h"

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/metrics/breakdown.h"
#include "analyzer/metrics/rate_limiter.h"
#include "analyzer/model/json_get.h"
#include "tracer/format/keys.h"

namespace shardscope::metrics {
namespace {

using model::Event;

struct Ref {
  const Event* e;
  const model::Track* track;
};

int64_t issued(const Event& e) { return e.issued_ns != model::kUnknown ? e.issued_ns : e.ts_ns; }

std::string us(int64_t ns) { return fmt::format("{:.1f} µs", double(ns) / 1e3); }

}  // namespace

Verdict RankPrefetch::verdict() const {
  bool any = false;
  for (const StepPrefetch& s : steps) {
    if (s.verdict == Verdict::NotEffective) return Verdict::NotEffective;
    if (s.verdict == Verdict::Effective) any = true;
  }
  return any ? Verdict::Effective : Verdict::NotApplicable;
}

RankPrefetch check_prefetch(const model::Rank& rank) {
  RankPrefetch out;
  out.rank = rank.rank;
  out.configured = model::json_string(rank.run_config, keys::kCfgBackwardPrefetch).value_or("");
  out.unit_identity = model::json_string(rank.metadata, keys::report::kUnitIdentity).value_or("");
  RateLimiter limiter(rank);

  model::StringId bc_name = rank.strings.find(keys::kUnitBackward), fwd_name = rank.strings.find(keys::kUnitForward),
                  bwd_phase = rank.strings.find(keys::kBackwardPhase);
  std::vector<Ref> bcs, fwds, ags, rss, phases;
  for (const model::Track& t : rank.tracks)
    for (const Event& e : t.events) {
      if (e.ph != 'X') continue;
      if (e.name == bc_name && e.unit >= 0) bcs.push_back({&e, &t});
      else if (e.name == fwd_name && e.unit >= 0) fwds.push_back({&e, &t});
      else if (e.name == bwd_phase && e.cls == model::IntervalClass::Host) phases.push_back({&e, &t});
      else if (e.cls == model::IntervalClass::Communication && e.coll == model::CollectiveKind::AllGather && e.unit >= 0) ags.push_back({&e, &t});
      else if (e.cls == model::IntervalClass::Communication && e.coll == model::CollectiveKind::ReduceScatter) rss.push_back({&e, &t});
    }
  if (bcs.empty()) {
    out.not_applicable = "n/a: no per-unit backward compute ranges (\"unit_backward\" with a unit) in this trace";
    return out;
  }
  if (ags.empty()) {
    out.not_applicable = "n/a: no all-gathers tagged with their unit: nothing is re-gathered for backward (NO_SHARD / SHARD_GRAD_OP?)";
    return out;
  }
  auto by_ts = [](const Ref& a, const Ref& b) { return a.e->ts_ns < b.e->ts_ns; };
  std::sort(bcs.begin(), bcs.end(), by_ts);
  std::sort(fwds.begin(), fwds.end(), by_ts);
  std::sort(ags.begin(), ags.end(), by_ts);
  DeviceSets sets = device_sets(rank);

  std::vector<model::Step> steps = rank.steps;
  if (steps.empty()) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const Ref& r : bcs) lo = std::min(lo, r.e->ts_ns), hi = std::max(hi, r.e->end_ns());
    for (const Ref& r : ags) lo = std::min(lo, r.e->ts_ns), hi = std::max(hi, r.e->end_ns());
    steps.push_back({-1, lo, hi + 1, lo, hi + 1});
  }
  for (const model::Step& st : steps) {
    StepPrefetch sp;
    sp.step = st.number;
    // A step spans its host range and the device time its launches ran in (on a GPU the device lags).
    const int64_t step_lo = std::min(st.host_start_ns, st.start_ns), step_hi = std::max(st.host_end_ns, st.end_ns);
    auto in_step = [&](const Event& e) { return e.ts_ns >= step_lo && e.ts_ns < step_hi; };
    std::vector<Ref> all_b;
    for (const Ref& r : bcs)
      if (in_step(*r.e)) all_b.push_back(r);
    // Backward starts at the backward phase range, else where the last unit's forward compute ended.
    int64_t backward_start = all_b.empty() ? step_lo : all_b.front().e->ts_ns, last_forward_end = INT64_MIN;
    for (const Ref& r : fwds)
      if (in_step(*r.e) && r.e->end_ns() <= backward_start) last_forward_end = std::max(last_forward_end, r.e->end_ns());
    if (last_forward_end != INT64_MIN) backward_start = last_forward_end;
    for (const Ref& r : phases)
      if (in_step(*r.e)) backward_start = r.e->ts_ns;
    // SPEC's u_L … u_1 are the units re-gathered for backward; the root (kept unsharded through backward)
    // computes too but has no all-gather to hide, so it is not one of the pairs.
    std::vector<Ref> b;
    for (const Ref& r : all_b) {
      bool regathered = false;
      for (const Ref& a : ags)
        regathered |= a.e->unit == r.e->unit && in_step(*a.e) && issued(*a.e) >= backward_start;
      if (regathered) b.push_back(r);
    }
    if (b.size() < 2) {
      sp.reason = "n/a: fewer than two re-gathered units' backward compute in this step";
      out.steps.push_back(sp);
      continue;
    }
    size_t late = 0, late_throttled = 0, serialized = 0, throttled = 0, missing = 0;
    std::string first_late;
    for (size_t j = 0; j + 1 < b.size(); ++j) {
      const Event& cur = *b[j].e;
      const Event& next = *b[j + 1].e;
      // AG_{i-1}: the latest all-gather of the next unit issued in backward and started before BC_{i-1}.
      const Ref* ag = nullptr;
      for (const Ref& r : ags)
        if (r.e->unit == next.unit && issued(*r.e) >= backward_start && r.e->ts_ns <= next.ts_ns && in_step(*r.e)) ag = &r;
      if (!ag) {
        ++missing;
        continue;
      }
      const Event& a = *ag->e;
      UnitPrefetch u;
      u.unit = cur.unit;
      u.next_unit = next.unit;
      u.issue_lead_ns = cur.ts_ns - issued(a);
      u.ag_ns = a.dur_ns;
      u.hidden_ns = length_within(sets.compute, a.ts_ns, a.end_ns());
      int64_t wait_end = std::min(a.end_ns(), next.ts_ns);
      u.exposed_wait_ns = std::max<int64_t>(0, (wait_end - a.ts_ns) - length_within(sets.compute, a.ts_ns, wait_end));
      u.queued_ns = a.ts_ns - issued(a);
      for (const Ref& r : rss)
        if (r.track == ag->track && r.e->ts_ns < a.ts_ns && r.e->end_ns() > issued(a) && r.e->end_ns() <= a.ts_ns) u.serialized_behind_rs = true;
      u.throttled = limiter.throttled(a);
      if (u.issue_lead_ns <= 0) {
        if (late++ == 0) first_late = fmt::format("unit {}'s all-gather was issued {} after unit {}'s backward compute began", u.next_unit, us(-u.issue_lead_ns), u.unit);
        late_throttled += u.throttled;
      }
      if (u.serialized_behind_rs && u.queued_ns > u.ag_ns / 10) ++serialized;
      throttled += u.throttled;
      sp.ag_ns += u.ag_ns;
      sp.hidden_ns += u.hidden_ns;
      sp.exposed_wait_ns += u.exposed_wait_ns;
      sp.units.push_back(u);
    }
    size_t n = sp.units.size();
    if (n == 0) {
      sp.reason = fmt::format("n/a: no backward all-gather found for the {} unit pairs of this step", b.size() - 1);
      out.steps.push_back(sp);
      continue;
    }
    double share = sp.hidden_share();
    if (late == 0 && share >= kHiddenShareThreshold) {
      sp.verdict = Verdict::Effective;
      sp.reason = fmt::format("all {} backward all-gathers issued in prefetch order; {:.0f}% of their time hidden behind compute", n, 100 * share);
    } else {
      sp.verdict = Verdict::NotEffective;
      std::string limit = limiter.limit() ? fmt::format(" = {}", *limiter.limit()) : "";
      // A late issue the limiter held back is the limiter's doing: that is the reason to name.
      if (late > 0 && late_throttled == late)
        sp.reason = fmt::format("throttled by the rate limiter (limit_all_gathers{}): {} of {} all-gathers were issued late because their issue waited for an earlier "
                                "all-gather to complete ({})", limit, late, n, first_late);
      else if (late > 0)
        sp.reason = fmt::format("issued late: {} of {} all-gathers were issued only after the backward compute they should hide had begun ({})", late, n, first_late);
      else if (serialized > 0)
        sp.reason = fmt::format("serialized behind a reduce-scatter on the same stream: {} of {} all-gathers waited for one; {:.0f}% hidden", serialized, n, 100 * share);
      else if (throttled > 0)
        sp.reason = fmt::format("throttled by the rate limiter (limit_all_gathers{}): the issue of {} of {} all-gathers waited for an earlier all-gather to complete "
                                "while the all-gathers in flight were at the limit; {:.0f}% hidden", limit, throttled, n, 100 * share);
      else
        sp.reason = fmt::format("no compute long enough to hide it: issued in order, but only {:.0f}% of all-gather time overlaps compute", 100 * share);
    }
    if (missing) sp.reason += fmt::format(" ({} unit pairs had no backward all-gather)", missing);
    out.steps.push_back(sp);
  }
  return out;
}

}  // namespace shardscope::metrics
