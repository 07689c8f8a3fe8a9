#include "analyzer/metrics/intervals.h"

#include <algorithm>

namespace shardscope::metrics {

IntervalSet merge(std::vector<Interval> v) {
  std::erase_if(v, [](const Interval& i) { return i.end <= i.start; });
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  IntervalSet out;
  for (const Interval& i : v) {
    if (!out.empty() && i.start <= out.back().end) out.back().end = std::max(out.back().end, i.end);
    else out.push_back(i);
  }
  return out;
}

int64_t length(const IntervalSet& s) {
  int64_t n = 0;
  for (const Interval& i : s) n += i.end - i.start;
  return n;
}

int64_t length_within(const IntervalSet& s, int64_t lo, int64_t hi) {
  if (hi <= lo) return 0;
  // First interval that ends after lo.
  auto it = std::upper_bound(s.begin(), s.end(), lo, [](int64_t t, const Interval& i) { return t < i.end; });
  int64_t n = 0;
  for (; it != s.end() && it->start < hi; ++it) n += std::min(it->end, hi) - std::max(it->start, lo);
  return n;
}

IntervalSet intersect(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t s = std::max(a[i].start, b[j].start), e = std::min(a[i].end, b[j].end);
    if (e > s) out.push_back({s, e});
    if (a[i].end < b[j].end) ++i;
    else ++j;
  }
  return out;
}

int64_t intersection_length(const IntervalSet& a, const IntervalSet& b) { return length(intersect(a, b)); }

IntervalSet clip(const IntervalSet& s, int64_t lo, int64_t hi) {
  IntervalSet out;
  if (hi <= lo) return out;
  auto it = std::upper_bound(s.begin(), s.end(), lo, [](int64_t t, const Interval& i) { return t < i.end; });
  for (; it != s.end() && it->start < hi; ++it) out.push_back({std::max(it->start, lo), std::min(it->end, hi)});
  return out;
}

}  // namespace shardscope::metrics
