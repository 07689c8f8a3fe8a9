#include "viewer/model/range_stats.h"

#include <vector>

namespace shardscope::viewer {

RangeIndex build_range_index(const model::Rank& rank) {
  RangeIndex idx;
  idx.device = metrics::device_sets(rank);
  std::array<std::vector<metrics::Interval>, kClassCount> parts;
  for (const model::Track& t : rank.tracks)
    for (const model::Event& e : t.events)
      if (e.ph == 'X' && e.dur_ns > 0) parts[size_t(e.cls)].push_back({e.ts_ns, e.end_ns()});
  for (size_t c = 0; c < kClassCount; ++c) idx.by_class[c] = metrics::merge(std::move(parts[c]));
  return idx;
}

RangeStats range_stats(const RangeIndex& index, int64_t lo, int64_t hi) {
  RangeStats s;
  s.lo = lo;
  s.hi = hi;
  if (hi <= lo) return s;
  for (size_t c = 0; c < kClassCount; ++c) s.class_ns[c] = metrics::length_within(index.by_class[c], lo, hi);
  s.window = metrics::measure(index.device, lo, hi);
  return s;
}

}  // namespace shardscope::viewer
