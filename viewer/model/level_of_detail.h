// Level of detail: what to draw of one track in one viewport. Events at least a pixel wide are drawn as
// themselves; a run of narrower events that follow each other with less than a pixel between them becomes
// one mark carrying its count (Tracy's folded zones). The cost is O(marks · log n), not O(events), and not
// O(pixels a run covers): the first visible event is a binary search in the lane's running ends, and where a
// run stops is found in a block-maximum hierarchy over each event's "break" (its gap and its length).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/index.h"
#include "model/trace.h"
#include "viewer/model/palette.h"
#include "viewer/model/viewport.h"

namespace shardscope::viewer {

// The events of one nesting depth of a track, in time order, with the running maximum of their ends: it
// never decreases, so the first event that can reach into a window is a lower_bound away even when ranges
// of one depth overlap (async work on a stream).
struct LaneIndex {
  std::vector<uint32_t> events;  // indices into track.events; empty with `all` set: every event, in order
  std::vector<int64_t> max_end;  // max_end[k] = max end_ns of the lane's events 0..k
  // breaks[0][k] (k > 0): the larger of event k's gap after the running end of events 0..k-1 and its own
  // length, in ns: a run of sub-pixel events goes on through k only while this is under a pixel. Level l + 1
  // holds the maximum of each kBreakFan entries of level l, so the first break at least a pixel wide is found
  // by reading a few blocks instead of one event per pixel (a cache miss each on a zoomed-out busy stream).
  std::vector<std::vector<float>> breaks;
  bool all = false;
  uint32_t size() const { return uint32_t(max_end.size()); }
  uint32_t event(uint32_t k) const { return all ? k : events[k]; }
};

inline constexpr size_t kBreakShift = 6, kBreakFan = size_t(1) << kBreakShift;  // 64 breaks to a block

struct TrackIndex {
  std::vector<LaneIndex> lanes;  // lane d: the events at depth d
  size_t bytes() const;
};

// The events a derived row's lanes point into: references into its rank's tracks, in time order (no copy
// of the events). A lane's positions index `refs`; refs[i] is the real event.
struct RefEvents {
  const model::Rank* rank = nullptr;
  const std::vector<model::EventRef>* refs = nullptr;
  const model::Event& operator[](uint32_t i) const {
    const model::EventRef& r = (*refs)[i];
    return rank->tracks[r.track].events[r.index];
  }
};

// `depth`: model::RankIndex::depth for this track (one entry per event).
TrackIndex build_track_index(const model::Track& track, const std::vector<uint16_t>& depth);
TrackIndex build_track_index(const RefEvents& events, const std::vector<uint16_t>& depth);

struct Mark {
  float x0 = 0, x1 = 0;  // pixels from the viewport's left edge, clipped to [−1, width + 1]
  uint32_t event = 0;    // the first event (index into track.events)
  uint32_t count = 1;    // > 1: a merged run of sub-pixel events
  uint16_t lane = 0;
  Rgb colour = 0;  // the first event's (a merged run is not scanned event by event)
};

struct LodOptions {
  double min_px = 1.0;      // narrower events merge with their neighbours
  double max_run_px = 8.0;  // a merged run ends with the event that reaches this far past its start: a colour
                            // sample every few pixels, and a frame of a few thousand rectangles
  // The rank's host colours by category id (host_colours_by_category): CUDA API and user ranges apart from
  // CPU ops. Null: host ranges take the class colour.
  const std::vector<Rgb>* host_colours = nullptr;
};

// The marks that get a name printed on them: single events wider than `min_px`, each starting at or after the
// end of the last one named in its lane. Lanes come one after another and in time order (track_marks), and
// in a "+N" lane the slices overlap: a name there starting under the previous one would print over it.
std::vector<size_t> labelled_marks(const std::vector<Mark>& marks, float min_px = 40);

// Appends the marks of one lane in viewport order.
void lane_marks(const model::Track& track, const LaneIndex& lane, uint16_t lane_no, const Viewport& vp,
                std::vector<Mark>& out, const LodOptions& options = {});
// All lanes of a track.
void track_marks(const model::Track& track, const TrackIndex& index, const Viewport& vp, std::vector<Mark>& out,
                 const LodOptions& options = {});
// A derived row's: Mark::event is a position in `events.refs`.
void track_marks(const RefEvents& events, const TrackIndex& index, const Viewport& vp, std::vector<Mark>& out,
                 const LodOptions& options = {});

// The first lane position p in [from, to) whose break is at least `ns`, else `to`.
uint32_t first_break(const LaneIndex& lane, uint32_t from, uint32_t to, float ns);

// The event of `lane` under time `ns`, or within `slack_ns` of it: the one that holds ns, else the nearest.
std::optional<uint32_t> hit_test(const model::Track& track, const LaneIndex& lane, double ns, double slack_ns);
std::optional<uint32_t> hit_test(const RefEvents& events, const LaneIndex& lane, double ns, double slack_ns);

// How many of the lane's events overlap [lo, hi): what a merged mark's counts add up to (for tests).
size_t visible_events(const model::Track& track, const LaneIndex& lane, double lo, double hi);

}  // namespace shardscope::viewer
