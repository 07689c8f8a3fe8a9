// Level of detail: what to draw of one track in one viewport. Events at least a pixel wide are drawn as
// themselves; a run of narrower events that follow each other with less than a pixel between them becomes
// one mark carrying its count (Tracy's folded zones). The cost is O(marks · log n), not O(events): the first
// visible event and the end of each run are found by binary search in the track's per-lane index.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/trace.h"
#include "viewer/model/palette.h"
#include "viewer/model/viewport.h"

namespace shardscope::viewer {

// The events of one nesting depth of a track, in time order, with the running maximum of their ends: it
// never decreases, so the first event that can reach into a window is a lower_bound away even when ranges
// of one depth overlap (async work on a stream).
struct LaneIndex {
  std::vector<uint32_t> events;   // indices into track.events; empty with `all` set: every event, in order
  std::vector<int64_t> max_end;   // max_end[k] = max end_ns of the lane's events 0..k
  bool all = false;
  uint32_t size() const { return uint32_t(max_end.size()); }
  uint32_t event(uint32_t k) const { return all ? k : events[k]; }
};

struct TrackIndex {
  std::vector<LaneIndex> lanes;  // lane d: the events at depth d
  size_t bytes() const;
};

// `depth`: model::RankIndex::depth for this track (one entry per event).
TrackIndex build_track_index(const model::Track& track, const std::vector<uint16_t>& depth);

struct Mark {
  float x0 = 0, x1 = 0;  // pixels from the viewport's left edge, clipped to [−1, width + 1]
  uint32_t event = 0;    // the first event (index into track.events)
  uint32_t count = 1;    // > 1: a merged run of sub-pixel events
  uint16_t lane = 0;
  Rgb colour = 0;        // the first event's (a merged run is not scanned event by event)
};

struct LodOptions {
  double min_px = 1.0;  // narrower events merge with their neighbours
};

// Appends the marks of one lane in viewport order.
void lane_marks(const model::Track& track, const LaneIndex& lane, uint16_t lane_no, const Viewport& vp,
                std::vector<Mark>& out, const LodOptions& options = {});
// All lanes of a track.
void track_marks(const model::Track& track, const TrackIndex& index, const Viewport& vp, std::vector<Mark>& out,
                 const LodOptions& options = {});

// The event of `lane` under time `ns`, or within `slack_ns` of it: the one that holds ns, else the nearest.
std::optional<uint32_t> hit_test(const model::Track& track, const LaneIndex& lane, double ns, double slack_ns);

// How many of the lane's events overlap [lo, hi): what a merged mark's counts add up to (for tests).
size_t visible_events(const model::Track& track, const LaneIndex& lane, double lo, double hi);

}  // namespace shardscope::viewer
