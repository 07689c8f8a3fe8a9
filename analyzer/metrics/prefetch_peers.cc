// The late-peer cause: an all-gather completes only when every rank of its group has joined it, so a pair that
// is issued in time and still not hidden may be waiting for another rank. The n-th all-gather is the same
// collective on every rank (ranks issue collectives in one order); arrivals are compared on the wall clock,
// each rank's trace clock mapped through its own clock_sync pairs, as the straggler analysis does.
#include <algorithm>
#include <map>

#include "analyzer/metrics/clock_map.h"
#include "analyzer/metrics/prefetch.h"
#include "analyzer/metrics/prefetch_internal.h"
#include "model/saturating.h"

namespace shardscope::metrics {
namespace {

// Each rank's all-gathers on its device timeline, by start: wall-clock start and where the event is.
struct Arrivals {
  std::vector<int64_t> wall_start;
  std::map<std::pair<int32_t, int32_t>, size_t> ordinal;  // (track, index) -> n
};

Arrivals arrivals(const model::Rank& rank) {
  ClockMap clock(rank.clock_sync);
  std::vector<std::pair<int64_t, std::pair<int32_t, int32_t>>> all;
  for (size_t t = 0; t < rank.tracks.size(); ++t)
    for (size_t i = 0; i < rank.tracks[t].events.size(); ++i) {
      const model::Event& e = rank.tracks[t].events[i];
      if (e.cls == model::IntervalClass::Communication && e.coll == model::CollectiveKind::AllGather && e.ph == 'X')
        all.push_back({e.ts_ns, {int32_t(t), int32_t(i)}});
    }
  std::sort(all.begin(), all.end());
  Arrivals a;
  for (size_t n = 0; n < all.size(); ++n) {
    a.wall_start.push_back(clock.to_realtime(all[n].first));
    a.ordinal[all[n].second] = n;
  }
  return a;
}

}  // namespace

PrefetchCheck check_prefetch(const model::Trace& trace) {
  PrefetchCheck out;
  for (const model::Rank& rank : trace.ranks) out.ranks.push_back(check_prefetch(rank));
  if (trace.ranks.size() > 1) {
    std::vector<Arrivals> arr;
    for (const model::Rank& rank : trace.ranks) arr.push_back(arrivals(rank));
    for (size_t r = 0; r < out.ranks.size(); ++r) {
      bool changed = false;
      for (StepPrefetch& s : out.ranks[r].steps) {
        for (UnitPrefetch& u : s.units) {
          auto n = arr[r].ordinal.find({u.all_gather.track, u.all_gather.index});
          if (n == arr[r].ordinal.end()) continue;
          const int64_t mine = arr[r].wall_start[n->second];
          for (size_t p = 0; p < arr.size(); ++p) {
            if (p == r || n->second >= arr[p].wall_start.size()) continue;
            const int64_t late = model::sat_sub(arr[p].wall_start[n->second], mine);  // wall times from the file: any int64
            if (late > u.late_peer_ns) u.late_peer = trace.ranks[p].rank, u.late_peer_ns = late;
          }
          // Issued in time and not hidden: when a peer's late arrival explains the exposed time, it is the cause.
          // Issued in time and not held by the limiter or a reduce-scatter: a peer's lateness may explain it.
          const bool ran_in_time = u.cause == Cause::LongerThanCompute || u.cause == Cause::NoComputeUnderIt || u.cause == Cause::StartedLate;
          if (ran_in_time && u.late_peer >= 0 && u.late_peer_ns >= kLatePeerShare * double(u.exposed_wait_ns) && u.exposed_wait_ns > 0) {
            u.cause = Cause::LatePeer;
            changed = true;
          }
        }
        if (changed) judge_step(s);
      }
      if (changed) judge_run(out.ranks[r]);
    }
  }
  bool any_effective = false;
  for (const RankPrefetch& r : out.ranks) {
    if (r.verdict == Verdict::NotEffective) out.verdict = Verdict::NotEffective;
    any_effective |= r.verdict == Verdict::Effective;
  }
  if (out.verdict != Verdict::NotEffective && any_effective) out.verdict = Verdict::Effective;
  return out;
}

}  // namespace shardscope::metrics
