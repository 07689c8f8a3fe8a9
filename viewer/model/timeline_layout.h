// The timeline's rows, apart from any widget: per rank a header, then a row per track (host threads with a
// lane per nesting depth, device streams, communication) and a row per counter. Rows carry their pixel
// place, so the widget paints rows that intersect its height and maps a click back to a row and lane.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/index.h"
#include "model/trace.h"
#include "viewer/model/derived_rows.h"
#include "viewer/model/level_of_detail.h"

namespace shardscope::viewer {

// What the viewer keeps per rank beside the model: nesting depths and launch links, and the lane indexes.
struct RankView {
  const model::Rank* rank = nullptr;
  const model::EventArgs* args = nullptr;  // the events' args when the run was loaded with them (Trace::args)
  model::RankIndex index;
  std::vector<TrackIndex> tracks;  // one per rank->tracks entry
  std::vector<Rgb> host_colours;   // per string id: the colour of a host range of that category (palette.h)
  // Per track: (slices folded into the last lane by kMaxLanes, lanes they came from).
  std::vector<std::pair<uint32_t, uint16_t>> folded;
  std::vector<uint8_t> sync_lane;   // per track: 1 when its last lane holds the stream's sync records
  std::vector<DerivedRow> derived;  // rows the trace has no track for (derived_rows.h): FSDP units
  size_t bytes() const;             // the side tables' heap size, the args table's included
};

// Overlapping slices on one device stream or communication track take at most this many lanes; the slices
// deeper than that are drawn in the last lane (a stream with overlapping kernels otherwise grows thousands
// of lanes). Host threads keep every lane: theirs are call nesting, which reads as a stack.
inline constexpr uint16_t kMaxLanes = 4;
// Moves depths past the cap into the last lane, before the lanes are indexed (so hit tests, outlines and
// marks all see the same lane); returns (slices moved, lanes they came from).
std::pair<uint32_t, uint16_t> cap_lanes(std::vector<uint16_t>& depth, uint16_t cap = kMaxLanes);

// A device stream's lanes, into `depth`: its kernels, copies and sets by their overlap among themselves (at
// most kMaxLanes - 1 lanes when the stream has sync records), and under them one lane of its sync records
// (cudaStreamSynchronize, cudaEventSynchronize, Stream Wait Event on the stream's row). A sync record spans
// the kernels it waits for: nested under it they took a second lane, and one stream looked concurrent.
struct StreamLanes {
  std::pair<uint32_t, uint16_t> folded;  // as cap_lanes
  bool sync_lane = false;                // the last lane holds the sync records
};
StreamLanes stream_lanes(const model::Track& track, std::vector<uint16_t>& depth);

// Group: a fold of tracks of one rank (row_arrangement.h); its row is one summary lane when collapsed.
// Derived: a row made of references to the rank's events (RankView::derived), drawn and hit like a track.
enum class RowKind : uint8_t { RankHeader, Track, Counter, Group, Derived };
inline bool has_lanes(RowKind k) { return k == RowKind::Track || k == RowKind::Derived; }
// A row of its own (not a header): what can be pinned, hidden and moved.
inline bool is_leaf(RowKind k) { return k == RowKind::Track || k == RowKind::Counter || k == RowKind::Derived; }

struct Row {
  RowKind kind = RowKind::Track;
  uint32_t rank = 0;  // index into the layout's ranks
  int32_t item =
      -1;  // track index (Track), counter index (Counter), RowGroup (Group) or RankView::derived index (Derived)
  uint16_t lanes = 1;  // Track, Derived: nesting depths shown (at most kMaxLanes on a stream)
  int y = 0, height = 0;
  std::string label;
  uint32_t folded = 0;        // Track, Derived: slices deeper than kMaxLanes drawn in the last lane
  uint16_t folded_lanes = 0;  // Track, Derived: the lanes they came from
  bool sync_lane = false;     // Track: its last lane holds the stream's sync records (stream_lanes)
  // The lane the "+N" slices past the cap are drawn in: the last, or the one above the sync lane.
  int folded_lane() const { return lanes - 1 - int(sync_lane); }
};

struct LayoutOptions {
  int header_height = 20;
  int lane_height = 16;
  int counter_height = 32;
  int gap = 3;
};

class TimelineLayout {
 public:
  TimelineLayout() = default;
  // `trace` must outlive the layout (rows point into it).
  explicit TimelineLayout(const model::Trace& trace, const LayoutOptions& options = {});

  const std::vector<Row>& rows() const { return rows_; }
  const std::vector<RankView>& ranks() const { return ranks_; }
  const LayoutOptions& options() const { return options_; }
  int height() const { return height_; }
  int64_t start_ns() const { return start_ns_; }
  int64_t end_ns() const { return end_ns_; }
  size_t events() const { return events_; }
  size_t bytes() const;  // side tables and rows, beyond the model

  // The row at pixel y (rows start at 0), or -1; `lane` gets the lane under y for a track row.
  int row_at(int y, int* lane = nullptr) const;
  // The row that shows track `track` of layout rank `rank`, or -1.
  int row_of_track(uint32_t rank, uint32_t track) const;
  // What a lane row (Track or Derived) draws: its events' lanes, its marks, the real event of a mark's or
  // hit's position (a derived row's positions index its refs).
  const TrackIndex& lanes_of(const Row& row) const;
  void row_marks(const Row& row, const Viewport& vp, std::vector<Mark>& out) const;
  std::optional<model::EventRef> row_hit(const Row& row, uint16_t lane, double ns, double slack_ns) const;
  model::EventRef row_event(const Row& row, uint32_t position) const;

 private:
  LayoutOptions options_;
  std::vector<RankView> ranks_;
  std::vector<Row> rows_;
  int height_ = 0;
  int64_t start_ns_ = 0, end_ns_ = 0;
  size_t events_ = 0;
};

// "thread 12", "stream 7", or the track's own name; used for row labels.
std::string track_label(const model::Track& track);

}  // namespace shardscope::viewer
