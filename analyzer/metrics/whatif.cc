#include "analyzer/metrics/whatif.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "analyzer/metrics/intervals.h"

namespace shardscope::metrics {
namespace {

using replay::Graph;
using replay::kNone;
using replay::Op;
using replay::Role;
using replay::Wiring;

int64_t end_of(const Op& op) { return op.ts_ns + op.dur_ns; }

int64_t issue_of(const Graph& g, int32_t o) {
  const Op& op = g.ops[size_t(o)];
  return op.launch != kNone ? g.ops[size_t(op.launch)].ts_ns : op.ts_ns;
}

// Where an all-gather was issued against the compute it should hide behind (the unit's compute before its
// consumer): before that compute's first launch (pre, or forward prefetch), between its first and last
// (post), or after it, waiting for its end on the device (none).
Prefetch measured_state(const Graph& g, const Wiring& w, int32_t ag) {
  const Op& op = g.ops[size_t(ag)];
  const std::vector<replay::Wait>& after = w.after[size_t(ag)];
  if (std::any_of(after.begin(), after.end(), [&](const replay::Wait& a) { return a.op == op.before_last; }))
    return Prefetch::None;
  // What the run's configuration says, where it says it (the trainer's), for a backward all-gather.
  if (const auto p = shardscope::trace::prefetch_from_name(g.ranks[size_t(op.rank)].backward_prefetch);
      p && op.backward)
    return *p == shardscope::trace::BackwardPrefetch::Pre    ? Prefetch::Pre
           : *p == shardscope::trace::BackwardPrefetch::Post ? Prefetch::Post
                                                             : Prefetch::None;
  const int64_t issue = issue_of(g, ag);
  if (issue < issue_of(g, op.before_first)) return Prefetch::Pre;
  return issue <= issue_of(g, op.before_last) ? Prefetch::Post : Prefetch::None;
}

// Re-issues an all-gather with `launch`'s host launch, and puts it on its lane before the first op that
// started at or after `at` on the measured timeline (a stream runs its work in issue order, and the device
// order of what the change leaves alone is the measured one).
void move_issue(const Graph& g, Wiring& w, int32_t ag, int32_t launch, int64_t at) {
  w.release[size_t(ag)] = g.ops[size_t(launch)].launch;
  std::vector<int32_t>& lane = w.lanes[size_t(g.ops[size_t(ag)].lane)];
  std::erase(lane, ag);
  lane.insert(std::find_if(lane.begin(), lane.end(), [&](int32_t o) { return g.ops[size_t(o)].ts_ns >= at; }), ag);
}

// A re-issued all-gather keeps none of the waits it had, and nothing but its consumer waits for it any more
// (a wait read off the measured order, which the change undoes): the new order's are added.
void drop_waits(const Graph& g, Wiring& w, int32_t ag) {
  w.after[size_t(ag)].clear();
  w.hold[size_t(ag)] = 0;
  for (size_t o = 0; o < g.ops.size(); ++o)
    if (int32_t(o) != g.ops[size_t(ag)].consumer_first && g.ops[o].rank == g.ops[size_t(ag)].rank)
      std::erase_if(w.after[o], [&](const replay::Wait& a) { return a.op == ag; });
}

void rewire_prefetch(const Graph& g, Wiring& w, const WhatIfChange& c, int32_t o) {
  const Op& op = g.ops[size_t(o)];
  if (op.before_first == kNone || op.consumer_first == kNone) return;
  const Prefetch now = measured_state(g, w, o);
  // A CPU run: the host runs the compute itself, so it issues a prefetch as it reaches that compute (pre) or
  // once it has finished it (post), where a GPU's host issues it around the compute's launches.
  const bool host = g.ops[size_t(op.before_first)].launch == kNone;
  if (op.backward && c.backward && *c.backward != now) {
    drop_waits(g, w, o);
    const Op &before_first = g.ops[size_t(op.before_first)], &before_last = g.ops[size_t(op.before_last)];
    if (*c.backward == Prefetch::Pre) {
      move_issue(g, w, o, op.before_first, before_first.ts_ns);
      if (host) w.release[size_t(o)] = op.before_first;
    } else if (*c.backward == Prefetch::Post) {
      move_issue(g, w, o, op.before_last, before_last.ts_ns);
      if (host) w.after[size_t(o)].push_back({op.before_last, 0});
    } else {
      // Issued at its own unit's pre-backward, and FSDP's stream waits for the compute issued before it. A
      // host that waited for it in the measured order no longer does: that compute's own launches come first.
      move_issue(g, w, o, op.consumer_first, end_of(before_last));
      w.after[size_t(o)].push_back({op.before_last, 0});
      for (size_t l = 0; l < g.ops.size(); ++l)
        if (w.wait_for[l] == o && g.ops[l].role == Role::Launch) w.wait_for[l] = kNone, w.gap[l] = g.ops[l].gap_ns;
    }
  } else if (!op.backward && c.forward && *c.forward != (now == Prefetch::Pre)) {
    drop_waits(g, w, o);
    const int32_t anchor = *c.forward ? op.before_first : op.consumer_first;
    move_issue(g, w, o, anchor, *c.forward ? g.ops[size_t(anchor)].ts_ns : end_of(g.ops[size_t(op.before_last)]));
    if (host && *c.forward) w.release[size_t(o)] = op.before_first;
    if (host && !*c.forward) w.after[size_t(o)].push_back({op.before_last, 0});
  }
}

// limit_all_gathers N: the host issues the k-th all-gather only once the compute that consumed the
// (k−N)-th has ended.
void rewire_limit(const Graph& g, Wiring& w, int limit) {
  for (const std::vector<int32_t>& ags : g.all_gathers) {
    std::vector<int64_t> post(ags.size(), 0);
    for (size_t k = 0; k < ags.size(); ++k)
      if (const int32_t l = g.ops[size_t(ags[k])].launch; l != kNone) {
        if (w.wait_for[size_t(l)] != kNone) post[k] = w.wait_post[size_t(l)];
        w.wait_for[size_t(l)] = kNone;
      }
    if (limit <= 0) continue;
    for (size_t k = size_t(limit); k < ags.size(); ++k) {
      const int32_t l = g.ops[size_t(ags[k])].launch, freed = g.ops[size_t(ags[k - size_t(limit)])].consumer_last;
      if (l == kNone || freed == kNone) continue;
      w.wait_for[size_t(l)] = freed;
      w.wait_post[size_t(l)] = post[k];
    }
  }
}

}  // namespace

Wiring changed_wiring(const Graph& g, const WhatIfChange& c) {
  Wiring w = replay::measured_wiring(g);
  for (size_t o = 0; o < g.ops.size(); ++o) {
    const Op& op = g.ops[o];
    if (c.unit && op.unit != *c.unit) continue;
    if (op.role == Role::AllGather) rewire_prefetch(g, w, c, int32_t(o));
    const double speed = op.role == Role::Compute ? c.compute_speed : c.comm_speed;
    // Bounded, so that a tiny speed cannot make a duration no int64 holds.
    if (op.role != Role::Launch && speed != 1.0)
      w.dur[o] = int64_t(std::llround(std::min(double(w.dur[o]) / speed, 1e18)));
  }
  if (c.limit) rewire_limit(g, w, *c.limit);
  replay::link_lanes(w);
  return w;
}

namespace {

// One rank's step on one timeline.
struct RankStep {
  int64_t lo = INT64_MAX, hi = INT64_MIN;  // first start, last end of its device ops
  std::vector<Interval> comm, compute, backward_ags;
  std::map<int, std::vector<Interval>> unit_ags;
};

struct Timeline {
  const std::vector<int64_t>& start;
  const std::vector<int64_t>& end;
};

std::vector<std::vector<RankStep>> per_step(const Graph& g, const Timeline& t) {
  std::vector<std::vector<RankStep>> out(g.ranks.size());
  for (size_t r = 0; r < g.ranks.size(); ++r) out[r].resize(g.ranks[r].steps.size());
  for (size_t o = 0; o < g.ops.size(); ++o) {
    const Op& op = g.ops[o];
    if (op.role == Role::Launch || op.step < 0 || size_t(op.step) >= out[size_t(op.rank)].size()) continue;
    RankStep& s = out[size_t(op.rank)][size_t(op.step)];
    const Interval iv{t.start[o], t.end[o]};
    s.lo = std::min(s.lo, iv.start), s.hi = std::max(s.hi, iv.end);
    if (op.hides) s.compute.push_back(iv);
    if (op.role == Role::Compute) continue;
    s.comm.push_back(iv);
    if (op.role != Role::AllGather) continue;
    s.unit_ags[op.unit].push_back(iv);
    if (op.backward) s.backward_ags.push_back(iv);
  }
  return out;
}

struct Figures {
  std::map<int64_t, int64_t> step_ns;  // step number → slowest rank's step
  int64_t exposed_ns = 0;              // summed over ranks and steady steps
  int64_t bag_ns = 0, bag_hidden_ns = 0;
  size_t rank_steps = 0, backward_ags = 0;
  std::map<int, int64_t> unit_exposed;
};

bool steady(const replay::RankInfo& rank, size_t s) {
  return !model::is_warm_up(rank.steps.front().number, s, rank.steps.size()) && !rank.steps[s].aborted;
}

// The step's time on this timeline: to the next step's first device op; the last step to its last op's end
// plus the measured tail after it (host time the model does not replay).
int64_t step_time(const replay::RankInfo& rank, const std::vector<RankStep>& st, const std::vector<RankStep>& measured,
                  size_t s) {
  if (s + 1 < st.size() && st[s + 1].lo != INT64_MAX) return st[s + 1].lo - st[s].lo;
  return st[s].hi - st[s].lo + (rank.steps[s].end_ns - measured[s].hi);
}

Figures figures(const Graph& g, const Timeline& t, const std::vector<std::vector<RankStep>>& measured) {
  Figures f;
  const auto steps = per_step(g, t);
  for (size_t r = 0; r < g.ranks.size(); ++r)
    for (size_t s = 0; s < steps[r].size(); ++s) {
      const RankStep& rs = steps[r][s];
      if (!steady(g.ranks[r], s) || rs.lo == INT64_MAX) continue;
      int64_t& slowest = f.step_ns[g.ranks[r].steps[s].number];
      slowest = std::max(slowest, step_time(g.ranks[r], steps[r], measured[r], s));
      const IntervalSet compute = merge(rs.compute), comm = merge(rs.comm), bag = merge(rs.backward_ags);
      f.exposed_ns += length(comm) - intersection_length(comm, compute);
      f.bag_ns += length(bag), f.bag_hidden_ns += intersection_length(bag, compute);
      f.backward_ags += rs.backward_ags.size();
      ++f.rank_steps;
      for (const auto& [unit, ivs] : rs.unit_ags) {
        const IntervalSet u = merge(ivs);
        f.unit_exposed[unit] += length(u) - intersection_length(u, compute);
      }
    }
  return f;
}

int64_t median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::string measured_backward(const Graph& g, const Wiring& w) {
  for (const replay::RankInfo& r : g.ranks)
    if (!r.backward_prefetch.empty()) return r.backward_prefetch;
  std::map<Prefetch, size_t> seen;
  for (size_t o = 0; o < g.ops.size(); ++o)
    if (g.ops[o].role == Role::AllGather && g.ops[o].backward && g.ops[o].before_first != kNone)
      ++seen[measured_state(g, w, int32_t(o))];
  if (seen.empty()) return "";
  const Prefetch most =
      std::max_element(seen.begin(), seen.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
  return most == Prefetch::Pre ? "pre" : most == Prefetch::Post ? "post" : "none";
}

}  // namespace

WhatIf what_if(const model::Trace& trace, const WhatIfChange& change) {
  return what_if(replay::build_graph(trace), change);
}

WhatIf what_if(const Graph& g, const WhatIfChange& change) {
  const Wiring base = replay::measured_wiring(g);
  const replay::Schedule unchanged = replay::schedule(g, base),
                         changed = replay::schedule(g, changed_wiring(g, change));
  std::vector<int64_t> ms(g.ops.size()), me(g.ops.size());
  for (size_t o = 0; o < g.ops.size(); ++o) ms[o] = g.ops[o].ts_ns, me[o] = g.ops[o].ts_ns + g.ops[o].dur_ns;
  const auto measured_steps = per_step(g, {ms, me});
  const Figures m = figures(g, {ms, me}, measured_steps),
                u = figures(g, {unchanged.start, unchanged.end}, measured_steps),
                p = figures(g, {changed.start, changed.end}, measured_steps);
  WhatIf out;
  out.settled = unchanged.settled && changed.settled;
  out.host_is_device = g.on_host;
  out.measured_backward = measured_backward(g, base);
  // The measured step is the trace's own window; the slowest rank's, as for the replays.
  std::map<int64_t, int64_t> window;
  for (const replay::RankInfo& r : g.ranks)
    for (size_t s = 0; s < r.steps.size(); ++s)
      if (steady(r, s))
        window[r.steps[s].number] = std::max(window[r.steps[s].number], r.steps[s].end_ns - r.steps[s].start_ns);
  std::vector<int64_t> meas, pred;
  std::vector<double> errors;
  for (const auto& [number, ns] : m.step_ns) {
    // A step whose replay ran past the clock's range (a speed near 0) has no time to give.
    if (!u.step_ns.count(number) || !p.step_ns.count(number))
      throw std::invalid_argument("the replay ran past the clock's range (a speed too close to 0?)");
    const StepFigures f{number, window[number], u.step_ns.at(number), p.step_ns.at(number)};
    out.steps.push_back(f);
    meas.push_back(f.measured_ns), pred.push_back(f.predicted_ns);
    if (f.measured_ns > 0) errors.push_back(std::abs(double(f.unchanged_ns - f.measured_ns)) / double(f.measured_ns));
  }
  if (out.steps.empty()) throw std::invalid_argument("no steady step with device work to replay");
  std::sort(errors.begin(), errors.end());
  out.unchanged_error = errors.empty()      ? 0
                        : errors.size() % 2 ? errors[errors.size() / 2]
                                            : (errors[errors.size() / 2 - 1] + errors[errors.size() / 2]) / 2;
  out.measured_step_ns = median(meas), out.predicted_step_ns = median(pred);
  const auto per = [](int64_t v, size_t n) { return n ? v / int64_t(n) : 0; };
  out.measured_exposed_ns = per(m.exposed_ns, m.rank_steps), out.predicted_exposed_ns = per(p.exposed_ns, p.rank_steps);
  out.measured_hidden = m.bag_ns ? double(m.bag_hidden_ns) / double(m.bag_ns) : 0;
  out.predicted_hidden = p.bag_ns ? double(p.bag_hidden_ns) / double(p.bag_ns) : 0;
  out.backward_all_gathers = m.backward_ags;
  for (const auto& [unit, ns] : m.unit_exposed)
    out.units.push_back(
        {unit, per(ns, m.rank_steps), per(p.unit_exposed.count(unit) ? p.unit_exposed.at(unit) : 0, p.rank_steps)});
  std::stable_sort(out.units.begin(), out.units.end(), [](const UnitExposure& a, const UnitExposure& b) {
    return std::abs(a.predicted_ns - a.measured_ns) > std::abs(b.predicted_ns - b.measured_ns);
  });
  return out;
}

}  // namespace shardscope::metrics
