// A device stream's lanes (viewer/model/timeline_layout.h, stream_lanes): sync records on a lane of their own
// under the stream's kernels, which never share a lane with them nor move down for them; and the names printed
// in a lane whose slices overlap (labelled_marks, level_of_detail.h).
#include <gtest/gtest.h>

#include "viewer/model/timeline_layout.h"

namespace shardscope::viewer {
namespace {

model::Event ev(int64_t ts, int64_t dur, model::IntervalClass cls = model::IntervalClass::Compute) {
  model::Event e;
  e.ts_ns = ts;
  e.dur_ns = dur;
  e.cls = cls;
  return e;
}

model::Trace one_stream(std::vector<model::Event> events) {
  model::Trace trace;
  model::Rank& r = trace.ranks.emplace_back();
  model::Track& t = r.tracks.emplace_back();
  t.name = "GPU 0 stream 7";
  t.kind = model::TrackKind::DeviceStream;
  t.events = std::move(events);
  return trace;
}

const Row& stream_row(const TimelineLayout& l) {
  for (const Row& r : l.rows())
    if (r.kind == RowKind::Track) return r;
  return l.rows().front();
}

constexpr auto kSync = model::IntervalClass::Sync;

TEST(ViewerStreamLanes, SyncRecordsOverKernelsLeaveOneKernelLane) {
  // Three kernels back to back, [0, 300); a stream sync over the first two's ends [50, 250) and an event
  // sync [260, 400) over the third's. Nested under the sync the kernels took lanes 0 and 2 (three lanes).
  model::Trace trace = one_stream({ev(0, 100), ev(50, 200, kSync), ev(100, 100), ev(200, 100), ev(260, 140, kSync)});
  TimelineLayout layout(trace);
  const Row& row = stream_row(layout);
  EXPECT_EQ(row.lanes, 2);  // kernels, then the sync records
  EXPECT_TRUE(row.sync_lane);
  EXPECT_EQ(row.folded, 0u);
  EXPECT_EQ(layout.ranks()[0].index.depth[0], (std::vector<uint16_t>{0, 1, 0, 0, 1}));
  const TrackIndex& lanes = layout.lanes_of(row);
  ASSERT_EQ(lanes.lanes.size(), 2u);
  EXPECT_EQ(lanes.lanes[0].size(), 3u);  // the three kernels, one lane
  EXPECT_EQ(lanes.lanes[1].size(), 2u);  // the two syncs
}

TEST(ViewerStreamLanes, OverlappingKernelsKeepTheCapAboveTheSyncLane) {
  // Six kernels each overlapping the one before (depths 0..5) under one sync: kMaxLanes - 1 = 3 kernel
  // lanes, the kernels of depths 3, 4 and 5 (3 slices from 3 lanes) in lane 2, the sync in lane 3.
  std::vector<model::Event> events{ev(0, 100), ev(5, 500, kSync)};
  for (int i = 1; i < 6; ++i) events.push_back(ev(i * 10, 100));
  model::Trace trace = one_stream(events);
  TimelineLayout layout(trace);
  const Row& row = stream_row(layout);
  EXPECT_EQ(row.lanes, 4);
  EXPECT_EQ(row.folded, 3u);
  EXPECT_EQ(row.folded_lanes, 3);
  EXPECT_EQ(row.folded_lane(), 2);
  EXPECT_EQ(layout.ranks()[0].index.depth[0], (std::vector<uint16_t>{0, 3, 1, 2, 2, 2, 2}));
}

TEST(ViewerStreamLanes, StreamWithoutSyncRecordsIsAsBefore) {
  // Two overlapping kernels: two lanes, no sync lane, the "+N" lane the last.
  model::Trace trace = one_stream({ev(0, 100), ev(50, 100)});
  TimelineLayout layout(trace);
  const Row& row = stream_row(layout);
  EXPECT_EQ(row.lanes, 2);
  EXPECT_FALSE(row.sync_lane);
  EXPECT_EQ(row.folded_lane(), 1);
  EXPECT_EQ(layout.ranks()[0].index.depth[0], (std::vector<uint16_t>{0, 1}));
}

TEST(ViewerStreamLanes, OverlappingSlicesInTheLastLaneGetOneNameAtATime) {
  // Lane 0: one wide kernel. Lane 3 (the "+N" lane): [10, 200) named; [50, 300) starts under it, not named;
  // [200, 260) starts where the first ends, named; [265, 285) is 20 px, too narrow; a merged run of two,
  // never named.
  auto mark = [](float x0, float x1, uint16_t lane, uint32_t count = 1) {
    Mark m;
    m.x0 = x0, m.x1 = x1, m.lane = lane, m.count = count;
    return m;
  };
  const std::vector<Mark> marks{mark(0, 100, 0),   mark(10, 200, 3),  mark(50, 300, 3),
                                mark(200, 260, 3), mark(265, 285, 3), mark(300, 400, 3, 2)};
  EXPECT_EQ(labelled_marks(marks), (std::vector<size_t>{0, 1, 3}));
}

}  // namespace
}  // namespace shardscope::viewer
