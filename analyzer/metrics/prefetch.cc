#include "analyzer/metrics/prefetch.h"

#include <algorithm>
#include <unordered_map>
#include <array>

#include "analyzer/metrics/breakdown.h"
#include "analyzer/metrics/prefetch_internal.h"
#include "analyzer/metrics/rate_limiter.h"
#include "model/saturating.h"
#include "tracer/format/keys.h"

namespace shardscope::metrics {
namespace {

using model::Event;
// Saturating: times come from the file and may lie anywhere in the int64 range. Differences that a report
// may negate are held within ±INT64_MAX (sat_diff).
using model::sat_add;
using model::sat_diff;
using model::sat_sub;

struct Ref {
  const Event* e;
  EventRef at;
};

// The events the check reads, found once.
struct Inputs {
  std::vector<Ref> bcs, fwds, ags, rss, phases;
};

Inputs collect(const model::Rank& rank) {
  Inputs in;
  const model::StringId bc = rank.strings.find(keys::kUnitBackward), fwd = rank.strings.find(keys::kUnitForward),
                        phase = rank.strings.find(keys::kBackwardPhase), derived = rank.strings.find(keys::kCatFsdp);
  std::vector<Ref> host_bcs, host_fwds, derived_bcs, derived_fwds;
  for (size_t t = 0; t < rank.tracks.size(); ++t) {
    const model::Track& track = rank.tracks[t];
    for (size_t i = 0; i < track.events.size(); ++i) {
      const Event& e = track.events[i];
      if (e.ph != 'X') continue;
      Ref r{&e, {int32_t(t), int32_t(i)}};
      const bool is_derived = e.cat == derived;
      if (e.name == bc && e.unit >= 0) (is_derived ? derived_bcs : host_bcs).push_back(r);
      else if (e.name == fwd && e.unit >= 0)
        (is_derived ? derived_fwds : host_fwds).push_back(r);
      else if (e.name == phase && !e.is_device())
        in.phases.push_back(r);
      else if (e.cls == model::IntervalClass::Communication && e.coll == model::CollectiveKind::AllGather &&
               e.unit >= 0)
        in.ags.push_back(r);
      else if (e.cls == model::IntervalClass::Communication && e.coll == model::CollectiveKind::ReduceScatter)
        in.rss.push_back(r);
    }
  }
  // On a GPU the host ranges only say when the compute was launched; the importers derive its device time
  // (cat "fsdp"), which is what can hide an all-gather.
  in.bcs = derived_bcs.empty() ? std::move(host_bcs) : std::move(derived_bcs);
  in.fwds = derived_fwds.empty() ? std::move(host_fwds) : std::move(derived_fwds);
  auto by_ts = [](const Ref& a, const Ref& b) { return a.e->ts_ns < b.e->ts_ns; };
  for (auto* v : {&in.bcs, &in.fwds, &in.ags, &in.rss, &in.phases}) std::sort(v->begin(), v->end(), by_ts);
  return in;
}

// The reduce-scatters of each track by end, with their place in start order: a pair's lookup of the one it
// queued behind is a binary search, not a scan of every reduce-scatter.
struct ReduceScatter {
  int64_t end_ns, ts_ns;
  size_t order;  // place in Inputs::rss (start order)
  EventRef at;
};
using RssByEnd = std::unordered_map<int32_t, std::vector<ReduceScatter>>;

RssByEnd index_reduce_scatters(const std::vector<Ref>& rss) {
  RssByEnd by;
  for (size_t i = 0; i < rss.size(); ++i)
    by[rss[i].at.track].push_back({rss[i].e->end_ns(), rss[i].e->ts_ns, i, rss[i].at});
  for (auto& [track, v] : by)
    std::sort(v.begin(), v.end(), [](const ReduceScatter& a, const ReduceScatter& b) { return a.end_ns < b.end_ns; });
  return by;
}

// On `track`, the reduce-scatter that ended after the all-gather's issue and by its start (started before
// it): the one it queued behind; of several, the last in start order.
const ReduceScatter* rs_before(const RssByEnd& by, int32_t track, int64_t issued_ns, int64_t start_ns) {
  auto it = by.find(track);
  if (it == by.end()) return nullptr;
  const std::vector<ReduceScatter>& v = it->second;
  auto lo =
      std::upper_bound(v.begin(), v.end(), issued_ns, [](int64_t t, const ReduceScatter& r) { return t < r.end_ns; });
  const ReduceScatter* best = nullptr;
  for (; lo != v.end() && lo->end_ns <= start_ns; ++lo)
    if (lo->ts_ns < start_ns && (!best || lo->order > best->order)) best = &*lo;
  return best;
}

// The cause of one pair that is not hidden, in the order SPEC lists them; a late peer is filled in later,
// across ranks (prefetch_peers.cc), for pairs that ran in time and still were not hidden.
Cause pair_cause(const UnitPrefetch& u) {
  // Late because the limiter held it, or late anyway: the hit itself came after BC_i was issued.
  if (u.issue_lead_ns <= 0)
    return u.throttled && u.throttled_from_ns < u.compute_issued_ns ? Cause::Throttled : Cause::IssuedLate;
  if (u.serialized_behind_rs && u.queued_ns > u.ag_ns / 10) return Cause::QueuedBehindReduceScatter;
  if (u.throttled) return Cause::Throttled;
  if (u.ag_start_ns >= u.compute_end_ns) return Cause::StartedLate;
  return u.ag_ns > sat_sub(u.compute_end_ns, u.compute_start_ns) ? Cause::LongerThanCompute : Cause::NoComputeUnderIt;
}

bool hidden(const UnitPrefetch& u) { return u.issue_lead_ns > 0 && u.hidden_share() >= kHiddenShareThreshold; }

}  // namespace

size_t StepPrefetch::count(Cause c) const {
  return size_t(std::count_if(units.begin(), units.end(), [&](const UnitPrefetch& u) { return u.cause == c; }));
}

const UnitPrefetch* StepPrefetch::example() const {
  const UnitPrefetch* best = nullptr;
  for (const UnitPrefetch& u : units)
    if (u.cause == cause && cause != Cause::None && (!best || u.exposed_wait_ns > best->exposed_wait_ns)) best = &u;
  return best;
}

void judge_step(StepPrefetch& sp) {
  sp.cause = Cause::None;
  sp.ag_ns = sp.hidden_ns = sp.exposed_wait_ns = 0;
  std::array<int64_t, kCauseCount> exposed{};
  std::array<size_t, kCauseCount> pairs{};
  for (UnitPrefetch& u : sp.units) {
    sp.ag_ns = sat_add(sp.ag_ns, u.ag_ns);
    sp.hidden_ns = sat_add(sp.hidden_ns, u.hidden_ns);
    sp.exposed_wait_ns = sat_add(sp.exposed_wait_ns, u.exposed_wait_ns);
    if (u.cause == Cause::None) continue;
    exposed[size_t(u.cause)] = sat_add(exposed[size_t(u.cause)], u.exposed_wait_ns);
    ++pairs[size_t(u.cause)];
  }
  if (sp.units.empty()) return;
  const bool in_order =
      std::all_of(sp.units.begin(), sp.units.end(), [](const UnitPrefetch& u) { return u.issue_lead_ns > 0; });
  sp.verdict = in_order && sp.hidden_share() >= kHiddenShareThreshold ? Verdict::Effective : Verdict::NotEffective;
  if (sp.verdict == Verdict::Effective) return;
  // A late issue breaks prefetch order whatever it cost, so it is named first; otherwise the cause that left
  // the most time exposed.
  const bool late_by_limiter = std::any_of(sp.units.begin(), sp.units.end(), [](const UnitPrefetch& u) {
    return u.issue_lead_ns <= 0 && u.cause == Cause::Throttled;
  });
  if (pairs[size_t(Cause::IssuedLate)] && pairs[size_t(Cause::IssuedLate)] >= pairs[size_t(Cause::Throttled)])
    sp.cause = Cause::IssuedLate;
  else if (late_by_limiter)
    sp.cause = Cause::Throttled;
  else if (pairs[size_t(Cause::IssuedLate)])
    sp.cause = Cause::IssuedLate;
  else {
    size_t best = 0;
    for (size_t c = 1; c < kCauseCount; ++c)
      if (pairs[c] && (best == 0 || exposed[c] > exposed[best])) best = c;
    sp.cause = best ? Cause(best) : Cause::LongerThanCompute;
  }
}

void judge_run(RankPrefetch& out) {
  out.steady_effective = out.steady_not_effective = 0;
  out.steady_ag_ns = out.steady_hidden_ns = 0;
  for (const StepPrefetch& s : out.steps) {
    if (s.warm_up || s.aborted || s.verdict == Verdict::NotApplicable) continue;
    (s.verdict == Verdict::Effective ? out.steady_effective : out.steady_not_effective)++;
    out.steady_ag_ns = sat_add(out.steady_ag_ns, s.ag_ns);
    out.steady_hidden_ns = sat_add(out.steady_hidden_ns, s.hidden_ns);
  }
  // report::run_rule (docs/check-prefetch.md): a strict majority of the steady steps decides; a tie goes to the pooled hidden share.
  if (out.steady_effective + out.steady_not_effective == 0) out.verdict = Verdict::NotApplicable;
  else if (out.steady_effective != out.steady_not_effective)
    out.verdict = out.steady_effective > out.steady_not_effective ? Verdict::Effective : Verdict::NotEffective;
  else
    out.verdict = out.steady_hidden_share() >= kHiddenShareThreshold ? Verdict::Effective : Verdict::NotEffective;
}

namespace {

// The pair (BC_i, BC_{i-1}) of consecutive backward computes, with AG_{i-1}, the next unit's all-gather.
UnitPrefetch pair_of(const Ref& current, const Ref& following, const Ref* ag, const DeviceSets& sets,
                     const RssByEnd& rss_by_end, const RateLimiter& limiter) {
  const Event& cur = *current.e;
  const Event& next = *following.e;
  const Event& a = *ag->e;
  UnitPrefetch u;
  u.unit = cur.unit;
  u.next_unit = next.unit;
  u.compute = current.at;
  u.next_compute = following.at;
  u.all_gather = ag->at;
  u.compute_start_ns = cur.ts_ns;
  u.compute_end_ns = cur.end_ns();
  u.next_compute_start_ns = next.ts_ns;
  u.issued_ns = a.issued_or_start_ns();
  u.ag_start_ns = a.ts_ns;
  u.ag_end_ns = a.end_ns();
  // Issue order is a host matter: on a GPU the host runs ahead of the device, so AG_{i-1}'s issue is set
  // against BC_i's first launch (the importers give derived compute its launch), on a CPU its start.
  u.compute_issued_ns = cur.issued_or_start_ns();
  u.issue_lead_ns = sat_diff(cur.issued_or_start_ns(), a.issued_or_start_ns());
  u.ag_ns = a.dur_ns;
  u.hidden_ns = length_within(sets.compute, a.ts_ns, a.end_ns());
  const int64_t wait_end = std::min(a.end_ns(), next.ts_ns);
  u.exposed_wait_ns =
      std::max<int64_t>(0, sat_sub(sat_sub(wait_end, a.ts_ns), length_within(sets.compute, a.ts_ns, wait_end)));
  u.queued_ns = sat_diff(a.ts_ns, a.issued_or_start_ns());
  if (const ReduceScatter* r = rs_before(rss_by_end, ag->at.track, a.issued_or_start_ns(), a.ts_ns)) {
    u.serialized_behind_rs = true;
    u.reduce_scatter = r->at;
  }
  if (auto hit = limiter.held_from(a)) u.throttled = true, u.throttled_from_ns = *hit;
  if (!hidden(u)) u.cause = pair_cause(u);
  return u;
}

// The trace's steps, or one step over all the check's events where it marks none.
std::vector<model::Step> steps_or_whole(const model::Rank& rank, const Inputs& in) {
  std::vector<model::Step> steps = rank.steps;
  if (!steps.empty()) return steps;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const Ref& r : in.bcs) lo = std::min(lo, r.e->ts_ns), hi = std::max(hi, r.e->end_ns());
  for (const Ref& r : in.ags) lo = std::min(lo, r.e->issued_or_start_ns()), hi = std::max(hi, r.e->end_ns());
  const int64_t end = sat_add(hi, 1);  // just past the last end; INT64_MAX when that is the last end
  steps.push_back({-1, lo, end, lo, end});
  return steps;
}

}  // namespace

RankPrefetch check_prefetch(const model::Rank& rank) {
  RankPrefetch out;
  out.rank = rank.rank;
  out.configured = rank.shape.backward_prefetch;
  out.unit_identity = rank.unit_identity;
  RateLimiter limiter(rank);
  out.limit = limiter.limit();
  Inputs in = collect(rank);
  if (in.bcs.empty()) {
    out.na = NotApplicable::NoUnitCompute;
    return out;
  }
  if (in.ags.empty()) {
    out.na = NotApplicable::NoUnitAllGathers;
    return out;
  }
  DeviceSets sets = device_sets(rank);
  const RssByEnd rss_by_end = index_reduce_scatters(in.rss);

  const std::vector<model::Step> steps = steps_or_whole(rank, in);
  for (size_t si = 0; si < steps.size(); ++si) {
    const model::Step& st = steps[si];
    StepPrefetch sp;
    sp.step = st.number;
    sp.warm_up = model::is_warm_up(steps.front().number, si, steps.size());
    sp.aborted = st.aborted;
    // A step spans its host range and the device time its launches ran in (on a GPU the device lags); an
    // event belongs to one step only: the next step's host start closes this one for issues.
    const int64_t step_lo = std::min(st.host_start_ns, st.start_ns), step_hi = std::max(st.host_end_ns, st.end_ns);
    const int64_t issue_hi =
        si + 1 < steps.size() ? std::min(steps[si + 1].host_start_ns, steps[si + 1].start_ns) : INT64_MAX;
    // Where the importer says which step launched an event (a GPU's device work), that decides.
    const bool own_steps = !rank.steps.empty();
    auto in_step = [&](const Event& e) {
      if (own_steps && e.step >= 0) return size_t(e.step) == si;
      return e.ts_ns >= step_lo && e.ts_ns < step_hi;
    };
    auto issued_in_step = [&](const Event& e) {
      if (own_steps && e.step >= 0) return size_t(e.step) == si;
      return e.issued_or_start_ns() >= step_lo && e.issued_or_start_ns() < issue_hi && e.ts_ns < step_hi;
    };
    std::vector<Ref> all_b;
    for (const Ref& r : in.bcs)
      if (in_step(*r.e)) all_b.push_back(r);
    // Backward starts at the backward phase range, else where the last unit's forward compute ended.
    int64_t backward_start = all_b.empty() ? step_lo : all_b.front().e->ts_ns, last_forward_end = INT64_MIN;
    for (const Ref& r : in.fwds)
      if (in_step(*r.e) && r.e->end_ns() <= backward_start)
        last_forward_end = std::max(last_forward_end, r.e->end_ns());
    if (last_forward_end != INT64_MIN) backward_start = last_forward_end;
    for (const Ref& r : in.phases)
      if (in_step(*r.e)) backward_start = r.e->ts_ns;
    for (const Ref& a : in.ags)
      if (issued_in_step(*a.e) && a.e->issued_or_start_ns() < backward_start) {
        ++out.forward_all_gathers;
        out.forward_throttled += limiter.throttled(*a.e);
      }
    // SPEC's u_L … u_1 are the units re-gathered for backward; the root (kept unsharded through backward)
    // computes too but has no all-gather to hide, so it is not one of the pairs.
    std::vector<const Ref*> backward_ags;
    for (const Ref& a : in.ags)
      if (issued_in_step(*a.e) && a.e->issued_or_start_ns() >= backward_start) backward_ags.push_back(&a);
    // Each unit's backward all-gathers, in order: the pairs below look theirs up by unit, linear in units.
    std::unordered_map<int32_t, std::vector<const Ref*>> ags_of;
    for (const Ref* a : backward_ags) ags_of[a->e->unit].push_back(a);
    std::vector<Ref> b;
    for (const Ref& r : all_b)
      if (ags_of.count(r.e->unit)) b.push_back(r);
    if (b.size() < 2) {
      sp.na = NotApplicable::FewerThanTwoUnits;
      sp.na_count = b.size();
      out.steps.push_back(sp);
      continue;
    }
    for (size_t j = 0; j + 1 < b.size(); ++j) {
      const Event& next = *b[j + 1].e;
      // AG_{i-1}: the latest backward all-gather of the next unit that started before BC_{i-1}.
      const Ref* ag = nullptr;
      if (auto it = ags_of.find(next.unit); it != ags_of.end())
        for (auto r = it->second.rbegin(); r != it->second.rend() && !ag; ++r)
          if ((*r)->e->ts_ns <= next.ts_ns) ag = *r;
      if (!ag) {
        ++sp.missing_pairs;
        continue;
      }
      sp.units.push_back(pair_of(b[j], b[j + 1], ag, sets, rss_by_end, limiter));
    }
    if (sp.units.empty()) {
      sp.na = NotApplicable::NoBackwardAllGather;
      sp.na_count = b.size() - 1;
      out.steps.push_back(sp);
      continue;
    }
    judge_step(sp);
    out.steps.push_back(sp);
  }
  judge_run(out);
  return out;
}

}  // namespace shardscope::metrics
