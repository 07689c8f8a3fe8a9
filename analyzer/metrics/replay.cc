#include "analyzer/metrics/replay.h"

#include <algorithm>
#include <numeric>

#include "model/saturating.h"

namespace shardscope::metrics::replay {
namespace {

// `a` must end before `b` starts, where the measured timeline shows it did.
void add_if_held(const Graph& g, Wiring& w, int32_t a, int32_t b) {
  if (a == kNone || b == kNone || a == b) return;
  if (g.ops[a].ts_ns + g.ops[a].dur_ns <= g.ops[b].ts_ns) w.after[size_t(b)].push_back({a, 0});
}

// The limiter held this all-gather's issue until the compute that consumed an earlier one had ended: the
// host waited, so its launch follows that end by what the host took after it, not the previous launch.
void wire_limiter(const Graph& g, Wiring& w) {
  for (const std::vector<int32_t>& ags : g.all_gathers) {
    if (ags.empty()) continue;
    const int limit = g.ranks[size_t(g.ops[ags.front()].rank)].limit.value_or(0);
    if (limit <= 0) continue;
    for (size_t k = size_t(limit); k < ags.size(); ++k) {
      const Op& ag = g.ops[ags[k]];
      const int32_t freed = g.ops[ags[k - size_t(limit)]].consumer_last;
      if (ag.launch == kNone || freed == kNone || !ag.throttled) continue;
      const int64_t free_end = g.ops[freed].ts_ns + g.ops[freed].dur_ns, issue = g.ops[ag.launch].ts_ns;
      if (issue < free_end) continue;
      w.wait_for[size_t(ag.launch)] = freed;
      w.wait_post[size_t(ag.launch)] = issue - free_end;
      w.gap[size_t(ag.launch)] = std::min(w.gap[size_t(ag.launch)], issue - free_end);
    }
  }
}

int64_t end_of(const Op& op) { return op.ts_ns + op.dur_ns; }

// An op held this long past its constraints looks for the wait that explains it.
constexpr int64_t kUnexplainedNs = 20'000;

// Each device op's hold, and the cross-stream waits that explain long ones.
void infer_waits(const Graph& g, Wiring& w) {
  std::vector<std::vector<int32_t>> by_end(g.ranks.size());
  for (size_t o = 0; o < g.ops.size(); ++o)
    if (g.ops[o].role != Role::Launch) by_end[size_t(g.ops[o].rank)].push_back(int32_t(o));
  for (auto& v : by_end)
    std::sort(v.begin(), v.end(), [&](int32_t a, int32_t b) { return end_of(g.ops[a]) < end_of(g.ops[b]); });
  for (size_t o = 0; o < g.ops.size(); ++o) {
    const Op& op = g.ops[o];
    if (op.role == Role::Launch) continue;
    int64_t base = INT64_MIN;
    // A launch stamped after its kernel started (two clocks, host and device) releases nothing.
    if (w.release[o] != kNone && g.ops[size_t(w.release[o])].ts_ns > op.ts_ns) w.release[o] = kNone;
    if (w.release[o] != kNone) base = g.ops[size_t(w.release[o])].ts_ns;
    if (w.prev[o] != kNone) base = std::max(base, end_of(g.ops[size_t(w.prev[o])]));
    for (const Wait& a : w.after[o]) base = std::max(base, end_of(g.ops[size_t(a.op)]));
    if (base == INT64_MIN) continue;  // the lane's first, with no launch: it starts as measured
    w.hold[o] = std::max<int64_t>(0, op.ts_ns - base);
    if (w.hold[o] < kUnexplainedNs) continue;
    const std::vector<int32_t>& v = by_end[size_t(op.rank)];
    auto it =
        std::upper_bound(v.begin(), v.end(), op.ts_ns, [&](int64_t t, int32_t x) { return t < end_of(g.ops[x]); });
    for (int tries = 0; it != v.begin() && tries < 64; ++tries) {
      const Op& c = g.ops[size_t(*--it)];
      if (end_of(c) <= base) break;
      if (c.lane == op.lane) continue;
      w.after[o].push_back({*it, op.ts_ns - end_of(c)});
      w.hold[o] = 0;
      break;
    }
  }
}

// A host thread that blocked on the device issued its next launch only after the device work that ended the
// block: that launch follows that work's end by what the host took after the block, not the previous launch.
void wire_host_waits(const Graph& g, Wiring& w) {
  std::vector<std::vector<int32_t>> by_end(g.ranks.size());
  for (size_t o = 0; o < g.ops.size(); ++o)
    if (g.ops[o].role != Role::Launch) by_end[size_t(g.ops[o].rank)].push_back(int32_t(o));
  for (auto& v : by_end)
    std::sort(v.begin(), v.end(), [&](int32_t a, int32_t b) { return end_of(g.ops[a]) < end_of(g.ops[b]); });
  for (const HostWait& h : g.host_waits) {
    const std::vector<int32_t>& v = by_end[size_t(h.rank)];
    auto it =
        std::upper_bound(v.begin(), v.end(), h.end_ns, [&](int64_t t, int32_t x) { return t < end_of(g.ops[x]); });
    if (it == v.begin() || end_of(g.ops[size_t(*std::prev(it))]) < h.ts_ns) continue;
    const int32_t done = *std::prev(it);
    const std::vector<int32_t>& lane = g.lanes[size_t(h.lane)];
    auto next = std::lower_bound(lane.begin(), lane.end(), h.end_ns,
                                 [&](int32_t o, int64_t t) { return g.ops[size_t(o)].ts_ns < t; });
    if (next == lane.end() || w.wait_for[size_t(*next)] != kNone) continue;
    const int64_t post = g.ops[size_t(*next)].ts_ns - end_of(g.ops[size_t(done)]);
    w.wait_for[size_t(*next)] = done;
    w.wait_post[size_t(*next)] = post;
    w.gap[size_t(*next)] = std::min(w.gap[size_t(*next)], g.ops[size_t(*next)].ts_ns - h.end_ns);
  }
}

// Which device ops a long host gap may have waited for.
enum class Waited { Collectives, AllGathers, Anything };

// A launch long after the previous one on its thread (`long_gap`), within `just_after` of the end of one of
// its rank's device ops of `what`, waited for that op (a trainer whose compute thread waits for its comm
// thread's collectives; a host sync the trace does not mark): it follows that end, not the previous launch.
void wire_host_gaps(const Graph& g, Wiring& w, Waited what, int64_t long_gap, int64_t just_after) {
  std::vector<std::vector<int32_t>> by_end(g.ranks.size());
  auto counts = [&](const Op& op) {
    if (op.role == Role::Launch) return false;
    return what == Waited::Anything ||
           (what == Waited::AllGathers ? op.role == Role::AllGather : op.role != Role::Compute);
  };
  for (size_t o = 0; o < g.ops.size(); ++o)
    if (counts(g.ops[o])) by_end[size_t(g.ops[o].rank)].push_back(int32_t(o));
  for (auto& v : by_end)
    std::sort(v.begin(), v.end(), [&](int32_t a, int32_t b) { return end_of(g.ops[a]) < end_of(g.ops[b]); });
  for (const std::vector<int32_t>& lane : g.lanes)
    for (size_t k = 1; k < lane.size(); ++k) {
      const Op& l = g.ops[size_t(lane[k])];
      if (l.role != Role::Launch || w.wait_for[size_t(lane[k])] != kNone || l.gap_ns < long_gap) continue;
      const std::vector<int32_t>& v = by_end[size_t(l.rank)];
      auto it =
          std::upper_bound(v.begin(), v.end(), l.ts_ns, [&](int64_t t, int32_t x) { return t < end_of(g.ops[x]); });
      if (it == v.begin()) continue;
      const int32_t done = *std::prev(it);
      const int64_t post = l.ts_ns - end_of(g.ops[size_t(done)]);
      if (post > just_after || end_of(g.ops[size_t(done)]) <= g.ops[size_t(lane[k - 1])].ts_ns) continue;
      w.wait_for[size_t(lane[k])] = done;
      w.wait_post[size_t(lane[k])] = post;
      w.gap[size_t(lane[k])] = std::min(w.gap[size_t(lane[k])], post);
    }
}

}  // namespace

void link_lanes(Wiring& w) {
  for (const std::vector<int32_t>& lane : w.lanes)
    for (size_t k = 0; k < lane.size(); ++k) w.prev[size_t(lane[k])] = k ? lane[k - 1] : kNone;
}

Wiring measured_wiring(const Graph& g) {
  const size_t n = g.ops.size();
  Wiring w;
  w.prev.assign(n, kNone);
  w.release.assign(n, kNone);
  w.after.assign(n, {});
  w.wait_for.assign(n, kNone);
  w.wait_post.assign(n, 0);
  w.gap.assign(n, 0);
  w.dur.assign(n, 0);
  w.hold.assign(n, 0);
  w.lanes = g.lanes;
  link_lanes(w);
  for (size_t o = 0; o < n; ++o) {
    const Op& op = g.ops[o];
    w.release[o] = op.launch;
    w.gap[o] = op.gap_ns;
    w.dur[o] = op.instance != kNone ? op.own_ns : op.dur_ns;
    if (op.role == Role::AllGather) {
      add_if_held(g, w, int32_t(o), op.consumer_first);
      add_if_held(g, w, op.before_last, int32_t(o));  // an all-gather issued only after that compute
    } else if (op.role == Role::ReduceScatter) {
      add_if_held(g, w, op.consumer_last, int32_t(o));
    }
  }
  wire_limiter(g, w);
  wire_host_waits(g, w);
  // Most specific first: a launch takes the first wait that explains its gap. A collective the host waited
  // for is looked for up to 2.5 ms back, an all-gather before any other (the trainer's comm thread wakes its
  // compute thread 1.1-2.1 ms after an all-gather's end in the H100 `none` run, where the reduce-scatter
  // beside it ends as late, and about 1 ms after the last reduce-scatter before the optimizer step); a gap
  // of a millisecond or more that ends just after any device op is the host draining the device.
  wire_host_gaps(g, w, Waited::Collectives, 200'000, 200'000);
  wire_host_gaps(g, w, Waited::AllGathers, 200'000, 2'500'000);
  wire_host_gaps(g, w, Waited::Collectives, 200'000, 2'500'000);
  wire_host_gaps(g, w, Waited::Anything, 1'000'000, 200'000);
  infer_waits(g, w);
  return w;
}

namespace {

// One pass: each op from its constraints' current times. Returns whether anything moved. `meet`: each
// instance's latest arrival so far. Times only ever rise from pass to pass (every constraint is a max of
// sums), so the latest start seen is the latest of the current ones, and a collective costs one look, not
// one per rank of it (thousands of ranks).
bool pass(const Graph& g, const Wiring& w, const std::vector<int32_t>& order, Schedule& s, std::vector<int64_t>& meet) {
  bool moved = false;
  for (int32_t o : order) {
    const Op& op = g.ops[size_t(o)];
    const int32_t prev = w.prev[size_t(o)];
    int64_t start = INT64_MIN;
    if (op.role == Role::Launch) {
      start = prev == kNone ? op.ts_ns : model::sat_add(s.start[size_t(prev)], w.gap[size_t(o)]);
      if (const int32_t f = w.wait_for[size_t(o)]; f != kNone)
        start = std::max(start, model::sat_add(s.end[size_t(f)], w.wait_post[size_t(o)]));
    } else {
      const int32_t rel = w.release[size_t(o)];
      if (rel == kNone && prev == kNone && w.after[size_t(o)].empty()) start = op.ts_ns;  // held by nothing known
      if (rel != kNone) start = std::max(start, s.start[size_t(rel)]);
      if (prev != kNone) start = std::max(start, s.end[size_t(prev)]);
      for (const Wait& a : w.after[size_t(o)]) start = std::max(start, model::sat_add(s.end[size_t(a.op)], a.lag));
      start = model::sat_add(start, w.hold[size_t(o)]);
    }
    // Saturating: times and durations come from the file.
    int64_t end = model::sat_add(start, w.dur[size_t(o)]);
    if (op.instance != kNone) {
      int64_t& m = meet[size_t(op.instance)];
      m = std::max(m, start);
      end = model::sat_add(m, w.dur[size_t(o)]);
    }
    if (start != s.start[size_t(o)] || end != s.end[size_t(o)]) moved = true;
    s.start[size_t(o)] = start, s.end[size_t(o)] = end;
  }
  return moved;
}

}  // namespace

Schedule schedule(const Graph& g, const Wiring& w) {
  Schedule s;
  s.start.assign(g.ops.size(), INT64_MIN / 4);
  s.end.assign(g.ops.size(), INT64_MIN / 4);
  std::vector<int32_t> order(g.ops.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return g.ops[a].ts_ns < g.ops[b].ts_ns; });
  // Each pass settles at least the next op of the longest chain that runs against the measured order; a
  // wiring with a cycle never settles.
  constexpr int kMaxPasses = 256;
  std::vector<int64_t> meet(g.instances.size(), INT64_MIN / 4);
  for (size_t i = 0; i < g.instances.size(); ++i)
    for (int32_t m : g.instances[i]) meet[i] = std::max(meet[i], s.start[size_t(m)]);
  while (s.passes < kMaxPasses) {
    ++s.passes;
    if (!pass(g, w, order, s, meet)) {
      s.settled = true;
      break;
    }
  }
  return s;
}

}  // namespace shardscope::metrics::replay
