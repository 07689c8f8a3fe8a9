// Interval arithmetic on hand-built cases whose answers are worked out in the comments.
#include <gtest/gtest.h>

#include "analyzer/metrics/breakdown.h"
#include "analyzer/metrics/intervals.h"

using namespace shardscope::metrics;

TEST(Intervals, MergeJoinsOverlappingAndTouchingAndDropsEmpty) {
  // [5,8) and [1,3) and [2,4) -> [1,4); [4,4) empty; [8,10) touches [5,8) -> [5,10); [12,11) reversed dropped.
  IntervalSet s = merge({{5, 8}, {1, 3}, {2, 4}, {4, 4}, {8, 10}, {12, 11}});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], (Interval{1, 4}));
  EXPECT_EQ(s[1], (Interval{5, 10}));
  EXPECT_EQ(length(s), 3 + 5);
}

TEST(Intervals, IntersectionOfTwoSets) {
  // a = [0,10) ∪ [20,30); b = [5,25): a ∩ b = [5,10) ∪ [20,25) -> 10.
  IntervalSet a = merge({{0, 10}, {20, 30}}), b = merge({{5, 25}});
  EXPECT_EQ(intersection_length(a, b), 10);
  EXPECT_EQ(intersect(a, b), (IntervalSet{{5, 10}, {20, 25}}));
  EXPECT_EQ(intersection_length(a, {}), 0);
}

TEST(Intervals, LengthWithinAndClip) {
  IntervalSet s = merge({{0, 10}, {20, 30}, {40, 50}});
  // [5, 45): 5 of the first, all 10 of the second, 5 of the third.
  EXPECT_EQ(length_within(s, 5, 45), 20);
  EXPECT_EQ(length_within(s, 10, 20), 0);
  EXPECT_EQ(length_within(s, 30, 5), 0);
  EXPECT_EQ(clip(s, 5, 45), (IntervalSet{{5, 10}, {20, 30}, {40, 45}}));
}

TEST(Breakdown, WindowMetricsFromHandBuiltSets) {
  // Window [0,100). Compute [0,40) ∪ [60,80) = 60. Communication [30,70) = 40, of which [30,40) and
  // [60,70) overlap compute = 20, so exposed 20, overlap 50 %. All activity = [0,80) = 80, idle 20.
  DeviceSets s;
  s.compute = merge({{0, 40}, {60, 80}});
  s.comm = merge({{30, 70}});
  s.all = merge({{0, 40}, {60, 80}, {30, 70}});
  WindowMetrics w = measure(s, 0, 100);
  EXPECT_EQ(w.window_ns, 100);
  EXPECT_EQ(w.compute_ns, 60);
  EXPECT_EQ(w.comm_ns, 40);
  EXPECT_EQ(w.overlap_ns, 20);
  EXPECT_EQ(w.exposed_ns(), 20);
  EXPECT_EQ(w.idle_ns(), 20);
  EXPECT_DOUBLE_EQ(*w.overlap_pct(), 50.0);
  EXPECT_DOUBLE_EQ(*w.comm_fraction_pct(), 40.0);
  EXPECT_DOUBLE_EQ(*w.exposed_fraction_pct(), 20.0);
  // Window [50,100): compute [60,80) = 20, comm [50,70) = 20, overlap [60,70) = 10, busy [50,80) = 30.
  WindowMetrics half = measure(s, 50, 100);
  EXPECT_EQ(half.compute_ns, 20);
  EXPECT_EQ(half.comm_ns, 20);
  EXPECT_EQ(half.overlap_ns, 10);
  EXPECT_EQ(half.idle_ns(), 20);
}

TEST(Breakdown, NoCommunicationMeansNoOverlapPercentage) {
  DeviceSets s;
  s.compute = merge({{0, 10}});
  s.all = s.compute;
  WindowMetrics w = measure(s, 0, 10);
  EXPECT_FALSE(w.overlap_pct().has_value());
  EXPECT_EQ(w.exposed_ns(), 0);
}
