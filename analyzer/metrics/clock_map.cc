#include "analyzer/metrics/clock_map.h"

#include <algorithm>
#include <cmath>

namespace shardscope::metrics {

ClockMap::ClockMap(std::vector<model::ClockPair> pairs) : pairs_(std::move(pairs)) {
  std::stable_sort(pairs_.begin(), pairs_.end(), [](const model::ClockPair& a, const model::ClockPair& b) { return a.trace_ns < b.trace_ns; });
  pairs_.erase(std::unique(pairs_.begin(), pairs_.end(), [](const model::ClockPair& a, const model::ClockPair& b) { return a.trace_ns == b.trace_ns; }),
               pairs_.end());
}

int64_t ClockMap::to_realtime(int64_t t) const {
  if (pairs_.empty()) return t;
  auto hi = std::upper_bound(pairs_.begin(), pairs_.end(), t, [](int64_t x, const model::ClockPair& p) { return x < p.trace_ns; });
  if (hi == pairs_.begin()) return t + (hi->realtime_ns - hi->trace_ns);
  auto lo = std::prev(hi);
  if (hi == pairs_.end()) return t + (lo->realtime_ns - lo->trace_ns);
  // In long double: the products of nanosecond spans overflow int64 after a few seconds.
  long double f = (long double)(t - lo->trace_ns) / (long double)(hi->trace_ns - lo->trace_ns);
  long double off_lo = (long double)(lo->realtime_ns - lo->trace_ns), off_hi = (long double)(hi->realtime_ns - hi->trace_ns);
  return t + int64_t(std::llroundl(off_lo + f * (off_hi - off_lo)));
}

}  // namespace shardscope::metrics
