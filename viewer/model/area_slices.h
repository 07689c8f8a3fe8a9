// An area selection (Perfetto's habit): a time range over a set of tracks, and the slices in it listed by
// name with count, total, mean and max duration, heaviest total first; as tab-separated text for the
// clipboard. A slice counts when it overlaps the range, with its whole duration (as Perfetto's slice
// aggregation does): a 10 ms kernel cut by the range's edge still costs 10 ms in the list.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "viewer/model/timeline_layout.h"

namespace shardscope::viewer {

struct TrackRef {
  uint32_t rank = 0;  // layout rank
  uint32_t track = 0;
  auto operator<=>(const TrackRef&) const = default;
};

struct SliceGroup {
  std::string name;
  uint64_t count = 0;
  int64_t total_ns = 0;  // saturating
  int64_t max_ns = 0;
  double mean_ns() const { return count ? double(total_ns) / double(count) : 0.0; }
};

// Complete slices ('X') on `tracks` overlapping [lo, hi) (an instant counts where lo <= ts < hi), grouped
// by name across ranks; by total descending, then name. Tracks named twice count once.
std::vector<SliceGroup> area_slices(const TimelineLayout& layout, std::vector<TrackRef> tracks, int64_t lo, int64_t hi);

// "name\tcount\ttotal_ns\tmean_ns\tmax_ns" and a line per group (mean rounded to the nearest ns); tabs and
// line breaks inside a name become spaces, so each group stays one line of five cells.
std::string area_tsv(const std::vector<SliceGroup>& groups);

// `shardscope-viewer --area T0:T1`: a time range relative to the run's start, each end a number with its unit
// (ns, us, ms or s; "1.5ms"); or `step:N`, the step numbered N (the trace's own number). Returns [lo, hi) in
// ns from the start, or the step, or nullopt with `error` saying what is wrong (a missing unit, an end not
// after the start, a negative time, a step that is no number).
struct AreaSpan {
  int64_t lo_ns = 0, hi_ns = 0;
  std::optional<int64_t> step;  // "step:N": resolved on the open run by step_window
};
std::optional<AreaSpan> parse_area_span(const std::string& text, std::string* error);

// Step `number`'s window over the ranks that have it: the earliest start to the latest end of their step
// windows (model::Step, absolute ns), so an area over it holds every rank's step; nullopt when no rank has it.
std::optional<std::pair<int64_t, int64_t>> step_window(const TimelineLayout& layout, int64_t number);

}  // namespace shardscope::viewer
