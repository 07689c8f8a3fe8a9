// Interval arithmetic on half-open [start, end) nanosecond intervals: the one tool every SPEC metric is
// built from (unions of compute, communication, device activity; their intersections; clipping to a step).
#pragma once

#include <cstdint>
#include <vector>

namespace shardscope::metrics {

struct Interval {
  int64_t start = 0, end = 0;
  bool operator==(const Interval&) const = default;
};

// A union of intervals: sorted, disjoint, none empty (touching intervals are joined).
using IntervalSet = std::vector<Interval>;

// The union of any intervals (unsorted, overlapping, empty or reversed ones are dropped).
IntervalSet merge(std::vector<Interval> intervals);

int64_t length(const IntervalSet& s);

// |s ∩ [lo, hi)|, by binary search: O(log n + intervals inside).
int64_t length_within(const IntervalSet& s, int64_t lo, int64_t hi);

// |a ∩ b| and a ∩ b for two sets.
int64_t intersection_length(const IntervalSet& a, const IntervalSet& b);
IntervalSet intersect(const IntervalSet& a, const IntervalSet& b);

// s ∩ [lo, hi).
IntervalSet clip(const IntervalSet& s, int64_t lo, int64_t hi);

}  // namespace shardscope::metrics
