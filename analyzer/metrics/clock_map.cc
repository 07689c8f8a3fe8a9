#include "analyzer/metrics/clock_map.h"

#include <algorithm>
#include <cmath>

namespace shardscope::metrics {

ClockMap::ClockMap(std::vector<model::ClockPair> pairs) : pairs_(std::move(pairs)) {
  std::stable_sort(pairs_.begin(), pairs_.end(),
                   [](const model::ClockPair& a, const model::ClockPair& b) { return a.trace_ns < b.trace_ns; });
  pairs_.erase(
      std::unique(pairs_.begin(), pairs_.end(),
                  [](const model::ClockPair& a, const model::ClockPair& b) { return a.trace_ns == b.trace_ns; }),
      pairs_.end());
}

namespace {
// t + offset, held within int64: a broken file's clock pairs may lie anywhere in the range, and a mapped
// time must not wrap to the other end of it.
int64_t shifted(int64_t t, long double off) {
  long double r = std::roundl((long double)t + off);
  if (r >= 9.2233720368547758e18L) return INT64_MAX;
  if (r <= -9.2233720368547758e18L) return INT64_MIN;
  return int64_t(r);
}
long double offset(const model::ClockPair& p) { return (long double)p.realtime_ns - (long double)p.trace_ns; }
}  // namespace

int64_t ClockMap::to_realtime(int64_t t) const {
  if (pairs_.empty()) return t;
  auto hi = std::upper_bound(pairs_.begin(), pairs_.end(), t,
                             [](int64_t x, const model::ClockPair& p) { return x < p.trace_ns; });
  if (hi == pairs_.begin()) return shifted(t, offset(*hi));
  auto lo = std::prev(hi);
  if (hi == pairs_.end()) return shifted(t, offset(*lo));
  // In long double: the products of nanosecond spans overflow int64 after a few seconds.
  long double f =
      ((long double)t - (long double)lo->trace_ns) / ((long double)hi->trace_ns - (long double)lo->trace_ns);
  long double off_lo = offset(*lo), off_hi = offset(*hi);
  return shifted(t, off_lo + f * (off_hi - off_lo));
}

}  // namespace shardscope::metrics
