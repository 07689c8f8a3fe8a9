#include "analyzer/metrics/intervals.h"

#include <algorithm>

namespace shardscope::metrics {
namespace {

// end − start of a piece, exact as uint64 (it may exceed INT64_MAX: [INT64_MIN, INT64_MAX)), added to a total
// held at INT64_MAX; an empty piece adds nothing.
void add_piece(int64_t& total, int64_t start, int64_t end) {
  if (end <= start) return;
  const uint64_t piece = uint64_t(end) - uint64_t(start);
  total = piece > uint64_t(INT64_MAX - total) ? INT64_MAX : total + int64_t(piece);
}

}  // namespace

// In place: a rank's device events are millions of intervals, and a second array for the union was a large
// part of a big file's peak.
IntervalSet merge(std::vector<Interval> v) {
  std::erase_if(v, [](const Interval& i) { return i.end <= i.start; });
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  size_t n = 0;
  for (const Interval& i : v) {
    if (n && i.start <= v[n - 1].end) v[n - 1].end = std::max(v[n - 1].end, i.end);
    else
      v[n++] = i;
  }
  v.resize(n);
  if (v.capacity() > 2 * n + 64) v.shrink_to_fit();  // the union is kept: not the events' room
  return v;
}

int64_t length(const IntervalSet& s) {
  int64_t n = 0;
  for (const Interval& i : s) add_piece(n, i.start, i.end);
  return n;
}

int64_t length_within(const IntervalSet& s, int64_t lo, int64_t hi) {
  if (hi <= lo) return 0;
  // First interval that ends after lo.
  auto it = std::upper_bound(s.begin(), s.end(), lo, [](int64_t t, const Interval& i) { return t < i.end; });
  int64_t n = 0;
  for (; it != s.end() && it->start < hi; ++it) add_piece(n, std::max(it->start, lo), std::min(it->end, hi));
  return n;
}

IntervalSet intersect(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t s = std::max(a[i].start, b[j].start), e = std::min(a[i].end, b[j].end);
    if (e > s) out.push_back({s, e});
    if (a[i].end < b[j].end) ++i;
    else
      ++j;
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
