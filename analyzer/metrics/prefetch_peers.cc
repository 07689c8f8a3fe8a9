// The late-peer cause: an all-gather completes only when every rank of its group has joined it, so a pair that
// is issued in time and still not hidden may be waiting for another rank. The instances are matched across
// ranks by the InstanceTable (instances.h), as the straggler analysis does.
#include "analyzer/metrics/instances.h"
#include "analyzer/metrics/prefetch.h"

namespace shardscope::metrics {

Verdict combine(Verdict a, Verdict b) {
  if (a == Verdict::NotEffective || b == Verdict::NotEffective) return Verdict::NotEffective;
  if (a == Verdict::Effective || b == Verdict::Effective) return Verdict::Effective;
  return Verdict::NotApplicable;
}

PrefetchCheck check_prefetch(const model::Trace& trace) {
  PrefetchCheck out;
  InstanceTable table;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    RankPrefetch& p = out.ranks.emplace_back(check_prefetch(trace.ranks[r]));
    locate_all_gathers(trace.ranks[r], p);
    table.add(arrivals(trace.ranks[r], {trace.ranks[r].rank, r}));
  }
  for (size_t r = 0; r < out.ranks.size(); ++r) {
    table.name_late_peers(out.ranks[r], {trace.ranks[r].rank, r});
    out.verdict = combine(out.verdict, out.ranks[r].verdict);
  }
  return out;
}

}  // namespace shardscope::metrics
