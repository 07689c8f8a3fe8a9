// The rules of the timeline's row arrangement (viewer/model/row_arrangement.h) on a hand-built run: what
// is folded on open, what a fold, a pin, a move, a hide and a filter do to the rows and their y, the lane
// cap's folded count, the summary lane's dominant colour, and the saved text's round trip.
#include <gtest/gtest.h>

#include <algorithm>

#include "viewer/model/row_arrangement.h"
#include "viewer/model/summary_lane.h"

namespace shardscope::viewer {
namespace {

model::Event ev(int64_t ts, int64_t dur, model::IntervalClass cls = model::IntervalClass::Compute) {
  model::Event e;
  e.ts_ns = ts;
  e.dur_ns = dur;
  e.cls = cls;
  return e;
}

model::Track track(std::string name, model::TrackKind kind, std::vector<model::Event> events) {
  model::Track t;
  t.name = std::move(name);
  t.kind = kind;
  t.events = std::move(events);
  return t;
}

// Rank 0: a GPU rank (a CPU thread, two CUDA API threads, NVTX, two streams, communication, a counter);
// stream 7 has six kernels each overlapping the one before. Rank 1: host only.
model::Trace run() {
  using K = model::TrackKind;
  model::Trace trace;
  model::Rank& r0 = trace.ranks.emplace_back();
  r0.rank = 0;
  r0.tracks.push_back(track("thread 11 (python)", K::HostThread, {ev(0, 100, model::IntervalClass::Host)}));
  r0.tracks.push_back(track("CUDA API thread 1", K::HostThread, {ev(0, 10, model::IntervalClass::Host)}));
  r0.tracks.push_back(track("CUDA API thread 2", K::HostThread, {ev(5, 10, model::IntervalClass::Host)}));
  r0.tracks.push_back(track("NVTX thread 1", K::HostThread, {ev(0, 50, model::IntervalClass::Host)}));
  std::vector<model::Event> kernels;
  for (int i = 0; i < 6; ++i) kernels.push_back(ev(i * 10, 100));
  r0.tracks.push_back(track("GPU 0 stream 7", K::DeviceStream, kernels));
  r0.tracks.push_back(track("GPU 0 stream 13", K::DeviceStream, {ev(0, 20)}));
  r0.tracks.push_back(track("comm: all-gather", K::Communication, {ev(0, 30, model::IntervalClass::Communication)}));
  r0.counters.push_back({"memory.allocated", {{0, 1.0}, {50, 2.0}}});
  model::Rank& r1 = trace.ranks.emplace_back();
  r1.rank = 1;
  r1.tracks.push_back(track("compute", K::HostThread, {ev(0, 100, model::IntervalClass::Host)}));
  return trace;
}

std::vector<std::string> labels(const RowArrangement& a) {
  std::vector<std::string> out;
  for (const Row& r : a.rows()) out.push_back(r.label);
  return out;
}

bool has(const RowArrangement& a, const std::string& label) {
  std::vector<std::string> l = labels(a);
  return std::find(l.begin(), l.end(), label) != l.end();
}

int index_of(const RowArrangement& a, const std::string& label) {
  std::vector<std::string> l = labels(a);
  auto it = std::find(l.begin(), l.end(), label);
  return it == l.end() ? -1 : int(it - l.begin());
}

class ViewerRowArrangement : public ::testing::Test {
 protected:
  model::Trace trace = run();
  TimelineLayout layout{trace};
  RowArrangement a{layout};
};

TEST(ViewerRowGroups, ByKindAndTracerName) {
  using K = model::TrackKind;
  EXPECT_EQ(group_of(track("CUDA API thread 1402", K::HostThread, {})), RowGroup::CudaApi);
  EXPECT_EQ(group_of(track("NVTX thread 1402", K::HostThread, {})), RowGroup::UserRanges);
  EXPECT_EQ(group_of(track("thread 1964 (python)", K::HostThread, {})), RowGroup::CpuThreads);
  EXPECT_EQ(group_of(track("GPU 0 stream 7", K::DeviceStream, {})), RowGroup::GpuStreams);
  EXPECT_EQ(group_of(track("comm: all-gather", K::Communication, {})), RowGroup::Communication);
  EXPECT_EQ(group_of(track("comm: all-gather", K::HostThread, {})), RowGroup::Communication);
}

TEST_F(ViewerRowArrangement, DefaultsFoldTheHostSideOfGpuRanksOnly) {
  // Rank 0 has streams: its CPU and CUDA API threads are folded, streams, NVTX, comm and counters open.
  EXPECT_FALSE(has(a, "CUDA API thread 1"));
  EXPECT_FALSE(has(a, "thread 11 (python)"));
  EXPECT_TRUE(has(a, "CUDA API threads (2)"));
  EXPECT_TRUE(has(a, "GPU 0 stream 7"));
  EXPECT_TRUE(has(a, "GPU 0 stream 13"));
  EXPECT_TRUE(has(a, "comm: all-gather"));
  EXPECT_TRUE(has(a, "NVTX thread 1"));
  EXPECT_TRUE(has(a, "memory.allocated"));
  // Rank 1 is host only: its thread is all there is, so it is open.
  EXPECT_TRUE(has(a, "compute"));
  EXPECT_TRUE(a.collapsed(a.rows()[size_t(index_of(a, "CUDA API threads (2)"))]));
  // Rows follow each other without overlap.
  for (size_t i = 1; i < a.rows().size(); ++i) EXPECT_GE(a.rows()[i].y, a.rows()[i - 1].y + a.rows()[i - 1].height);
  EXPECT_EQ(a.row_at(a.rows().back().y), int(a.rows().size() - 1));
}

TEST_F(ViewerRowArrangement, CollapsingAGroupLeavesOneRowAndMovesTheRestUp) {
  int group = index_of(a, "GPU streams (2)");
  ASSERT_GE(group, 0);
  int comm = index_of(a, "communication (1)");
  const int comm_y = a.rows()[size_t(comm)].y;
  const int streams_h = a.rows()[size_t(comm)].y - a.rows()[size_t(group) + 1].y;
  a.set_collapsed(a.rows()[size_t(group)], true);
  EXPECT_FALSE(has(a, "GPU 0 stream 7"));
  EXPECT_TRUE(has(a, "GPU streams (2)"));
  EXPECT_EQ(a.rows()[size_t(index_of(a, "communication (1)"))].y, comm_y - streams_h);
  // The folded group's row stands for both streams: what its summary lane draws.
  EXPECT_EQ(a.members(a.rows()[size_t(index_of(a, "GPU streams (2)"))]).size(), 2u);
  // A folded rank keeps only its header.
  a.set_collapsed(a.rows()[0], true);
  EXPECT_EQ(a.rows()[1].label, "rank 1");
}

TEST_F(ViewerRowArrangement, PinnedRowsComeFirstAndHoldTheTop) {
  a.set_pinned(a.rows()[size_t(index_of(a, "GPU 0 stream 13"))], true);
  a.set_pinned(a.rows()[size_t(index_of(a, "comm: all-gather"))], true);
  ASSERT_EQ(a.pinned_count(), 2u);
  EXPECT_EQ(a.rows()[0].label, "r0 · GPU 0 stream 13");
  EXPECT_EQ(a.rows()[1].label, "r0 · comm: all-gather");
  EXPECT_EQ(a.rows()[0].y, 0);
  EXPECT_EQ(a.rows()[2].y, a.pinned_height());
  EXPECT_FALSE(has(a, "GPU 0 stream 13"));  // not twice
  // Pinned rows reorder among themselves.
  EXPECT_TRUE(a.move(1, 0));
  EXPECT_EQ(a.rows()[0].label, "r0 · comm: all-gather");
  a.set_pinned(a.rows()[0], false);
  EXPECT_EQ(a.pinned_count(), 1u);
  EXPECT_TRUE(has(a, "comm: all-gather"));
}

TEST_F(ViewerRowArrangement, MovesStayWithinTheirGroup) {
  int s7 = index_of(a, "GPU 0 stream 7"), s13 = index_of(a, "GPU 0 stream 13");
  ASSERT_LT(s7, s13);
  EXPECT_TRUE(a.move(s13, s7));
  EXPECT_LT(index_of(a, "GPU 0 stream 13"), index_of(a, "GPU 0 stream 7"));
  EXPECT_FALSE(a.move(index_of(a, "comm: all-gather"), index_of(a, "GPU 0 stream 7")));
  EXPECT_FALSE(a.move(index_of(a, "GPU 0 stream 7"), 0));  // onto a rank header
}

TEST_F(ViewerRowArrangement, HiddenRowsLeaveAndComeBack) {
  a.hide(a.rows()[size_t(index_of(a, "GPU 0 stream 13"))]);
  EXPECT_FALSE(has(a, "GPU 0 stream 13"));
  EXPECT_TRUE(has(a, "GPU streams (2), 1 hidden"));
  EXPECT_EQ(a.hidden_count(), 1u);
  a.show_hidden();
  EXPECT_TRUE(has(a, "GPU 0 stream 13"));
  EXPECT_EQ(a.hidden_count(), 0u);
}

TEST_F(ViewerRowArrangement, FilterShowsMatchesEvenInFoldedGroups) {
  a.set_filter("api THREAD");
  EXPECT_TRUE(has(a, "CUDA API thread 1"));
  EXPECT_TRUE(has(a, "CUDA API thread 2"));
  EXPECT_FALSE(has(a, "GPU 0 stream 7"));
  EXPECT_FALSE(has(a, "GPU streams (2)"));  // no match in it: the group drops out
  EXPECT_TRUE(has(a, "rank 0"));
  EXPECT_TRUE(has(a, "rank 1"));
  a.set_filter("");
  EXPECT_FALSE(has(a, "CUDA API thread 1"));  // folded again
}

TEST_F(ViewerRowArrangement, FilterSearchesInsideFoldedRanks) {
  // Both ranks folded: the filter still finds rank 0's stream 7 and rank 1's "compute" thread.
  a.set_collapsed(a.rows()[size_t(index_of(a, "rank 0"))], true);
  a.set_collapsed(a.rows()[size_t(index_of(a, "rank 1"))], true);
  EXPECT_FALSE(has(a, "GPU 0 stream 7"));
  a.set_filter("stream 7");
  EXPECT_TRUE(has(a, "GPU 0 stream 7"));
  EXPECT_TRUE(has(a, "GPU streams (2)"));
  EXPECT_FALSE(has(a, "GPU 0 stream 13"));
  a.set_filter("COMPUTE");
  EXPECT_TRUE(has(a, "compute"));
  EXPECT_EQ(index_of(a, "compute"), index_of(a, "rank 1") + 2);  // under its rank and group headers
  a.set_filter("");
  EXPECT_FALSE(has(a, "compute"));  // folded again
}

TEST_F(ViewerRowArrangement, LaneCapFoldsDeepOverlapsIntoTheLastLane) {
  const Row& s7 = a.rows()[size_t(index_of(a, "GPU 0 stream 7"))];
  EXPECT_EQ(s7.lanes, kMaxLanes);
  EXPECT_EQ(s7.height, kMaxLanes * layout.options().lane_height);
  EXPECT_EQ(s7.folded, 2u);  // kernels 5 and 6 would have had lanes 5 and 6
  EXPECT_EQ(s7.folded_lanes, 2);
  const RankView& rv = layout.ranks()[0];
  for (uint16_t d : rv.index.depth[size_t(s7.item)]) EXPECT_LT(d, kMaxLanes);
  EXPECT_EQ(rv.tracks[size_t(s7.item)].lanes.back().size(), 3u);  // its own kernel and the two folded
  // Host threads keep their nesting.
  EXPECT_EQ(a.rows()[size_t(index_of(a, "GPU 0 stream 13"))].folded, 0u);
}

TEST_F(ViewerRowArrangement, RevealUnfoldsAndUnhides) {
  a.reveal(0, 1);  // CUDA API thread 1, folded by default
  EXPECT_GE(a.row_of_track(0, 1), 0);
  a.hide(a.rows()[size_t(a.row_of_track(0, 5))]);
  a.reveal(0, 5);
  EXPECT_GE(a.row_of_track(0, 5), 0);
}

// Where a flow to a folded track's event starts (row_showing_track): the folded group's row, the rank's
// header when the rank is folded, the track's own row once shown, nothing once hidden.
TEST_F(ViewerRowArrangement, FoldedTrackShowsOnItsGroupOrRankRow) {
  const int group = index_of(a, "CUDA API threads (2)");
  ASSERT_GE(group, 0);
  EXPECT_EQ(a.row_of_track(0, 2), -1);  // folded by default
  EXPECT_EQ(a.row_showing_track(0, 2), group);
  EXPECT_EQ(a.row_showing_track(0, 1), group);
  EXPECT_EQ(a.row_showing_track(0, 0), index_of(a, "CPU threads (1)"));
  EXPECT_EQ(a.row_showing_track(0, 4), index_of(a, "GPU 0 stream 7"));  // an open group: its own row
  a.set_collapsed(a.rows()[size_t(group)], false);
  EXPECT_EQ(a.row_showing_track(0, 2), index_of(a, "CUDA API thread 2"));
  a.hide(a.rows()[size_t(index_of(a, "CUDA API thread 2"))]);
  EXPECT_EQ(a.row_showing_track(0, 2), -1);
  a.set_collapsed(a.rows()[size_t(index_of(a, "rank 0"))], true);
  EXPECT_EQ(a.row_showing_track(0, 4), index_of(a, "rank 0"));
  EXPECT_EQ(a.row_showing_track(0, 2), -1);  // still hidden
}

TEST_F(ViewerRowArrangement, SavedTextRestoresTheSameRows) {
  a.set_collapsed(a.rows()[size_t(index_of(a, "CUDA API threads (2)"))], false);
  a.set_collapsed(a.rows()[size_t(index_of(a, "communication (1)"))], true);
  a.move(index_of(a, "CUDA API thread 2"), index_of(a, "CUDA API thread 1"));
  a.set_pinned(a.rows()[size_t(index_of(a, "memory.allocated"))], true);
  a.hide(a.rows()[size_t(index_of(a, "NVTX thread 1"))]);
  a.label_width = 240;
  const std::string text = a.save();

  RowArrangement b(layout);
  ASSERT_NE(labels(b), labels(a));
  ASSERT_TRUE(b.restore(text));
  EXPECT_EQ(labels(b), labels(a));
  for (size_t i = 0; i < a.rows().size(); ++i) EXPECT_EQ(b.rows()[i].y, a.rows()[i].y);
  EXPECT_EQ(b.label_width, 240);
  EXPECT_EQ(b.save(), text);

  // Text that is not an arrangement: false, and the defaults stay.
  RowArrangement c(layout), fresh(layout);
  EXPECT_FALSE(c.restore("not json"));
  EXPECT_FALSE(c.restore(R"({"version":1,"pinned":"oops"})"));
  EXPECT_FALSE(c.restore(R"({"version":7})"));
  EXPECT_EQ(labels(c), labels(fresh));
  // Keys this run lacks (another run in the same folder, a thread gone) are passed over.
  EXPECT_TRUE(c.restore(R"({"version":1,"pinned":["9/nothing"],"hidden":["0/gone"],"collapsed":{"4":true}})"));
  EXPECT_EQ(labels(c), labels(fresh));
}

TEST(ViewerSummaryLane, EachColumnTakesTheColourCoveringMostOfIt) {
  // Two tracks busy with communication over the first half, one with compute over the whole: the folded
  // lane is communication's colour on the first half (two against one), compute's on the second.
  model::Trace trace;
  model::Rank& r = trace.ranks.emplace_back();
  using K = model::TrackKind;
  r.tracks.push_back(track("a", K::DeviceStream, {ev(0, 1000, model::IntervalClass::Compute)}));
  r.tracks.push_back(track("b", K::DeviceStream, {ev(0, 500, model::IntervalClass::Communication)}));
  r.tracks.push_back(track("c", K::DeviceStream, {ev(0, 500, model::IntervalClass::Communication)}));
  TimelineLayout layout(trace);
  Viewport vp = Viewport::fit(0, 1000, 100);
  std::vector<Mark> marks;
  summary_marks(layout.ranks()[0], {0, 1, 2}, vp, marks);
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0].colour, colour_of(model::IntervalClass::Communication, model::CollectiveKind::None));
  EXPECT_EQ(marks[1].colour, colour_of(model::IntervalClass::Compute, model::CollectiveKind::None));
  EXPECT_NEAR(marks[0].x0, 0, 1);
  EXPECT_NEAR(marks[0].x1, 50, 1);
  EXPECT_NEAR(marks[1].x1, 100, 1);
  // Only the compute track: one run, the whole width.
  marks.clear();
  summary_marks(layout.ranks()[0], {0}, vp, marks);
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0].colour, colour_of(model::IntervalClass::Compute, model::CollectiveKind::None));
}

}  // namespace
}  // namespace shardscope::viewer
