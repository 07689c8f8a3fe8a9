// Statistics of a selected time range on one rank: time per interval class, and SPEC's window metrics
// (compute, communication, their overlap, exposed communication) measured by analyzer/metrics, so the
// viewer's numbers are the report's numbers for the same window.
#pragma once

#include <array>
#include <cstdint>

#include "analyzer/metrics/breakdown.h"
#include "analyzer/metrics/intervals.h"
#include "model/trace.h"

namespace shardscope::viewer {

inline constexpr size_t kClassCount = 6;  // model::IntervalClass's values

// Built once per rank, on the first selection (a rank's unions, not per-frame work).
struct RangeIndex {
  metrics::DeviceSets device;
  std::array<metrics::IntervalSet, kClassCount> by_class;  // union of each class's ranges
};
RangeIndex build_range_index(const model::Rank& rank);

struct RangeStats {
  int64_t lo = 0, hi = 0;
  std::array<int64_t, kClassCount> class_ns{};  // time covered by each class inside [lo, hi)
  metrics::WindowMetrics window;                // compute, comm, overlap, busy; exposed_ns(), overlap_pct()
};
RangeStats range_stats(const RangeIndex& index, int64_t lo, int64_t hi);

}  // namespace shardscope::viewer
