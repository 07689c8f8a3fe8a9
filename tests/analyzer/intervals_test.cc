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

// Sets that span the whole int64 range (a hostile file's times): lengths and windows hold at INT64_MAX
// instead of wrapping (signed overflow, which UBSan reports).
TEST(Intervals, LengthsAcrossTheWholeInt64RangeSaturate) {
  IntervalSet whole = merge({{INT64_MIN, INT64_MAX}});
  EXPECT_EQ(length(whole), INT64_MAX);
  EXPECT_EQ(length_within(whole, INT64_MIN, 0), INT64_MAX);  // 2^63: one more than fits
  EXPECT_EQ(length_within(whole, INT64_MIN + 1, 0), INT64_MAX);
  EXPECT_EQ(length_within(whole, -5, 5), 10);
  // Two pieces whose sum passes INT64_MAX.
  IntervalSet two = merge({{INT64_MIN, -1}, {0, 10}});
  EXPECT_EQ(length(two), INT64_MAX);
  EXPECT_EQ(length_within(two, INT64_MIN, INT64_MAX), INT64_MAX);
  EXPECT_EQ(intersection_length(two, whole), INT64_MAX);
}

TEST(Breakdown, WindowsAndSumsAtTheInt64ExtremesSaturate) {
  DeviceSets s;
  s.compute = merge({{INT64_MIN, -1}, {0, 10}});
  s.comm = merge({{INT64_MIN, INT64_MAX}});
  s.all = s.comm;
  WindowMetrics w = measure(s, INT64_MIN, INT64_MAX);
  EXPECT_EQ(w.window_ns, INT64_MAX);
  EXPECT_EQ(w.compute_ns, INT64_MAX);
  EXPECT_EQ(w.comm_ns, INT64_MAX);
  EXPECT_EQ(w.busy_ns, INT64_MAX);
  WindowMetrics total = w;
  total += w;  // the all-steps sum
  EXPECT_EQ(total.window_ns, INT64_MAX);
  EXPECT_EQ(total.overlap_ns, INT64_MAX);
  EXPECT_EQ(total.idle_ns(), 0);
}

// Device time before the first step and after the last one is measured against INT64_MIN and INT64_MAX.
TEST(Breakdown, OutsideStepsAndHtaAtTheInt64Extremes) {
  shardscope::model::Rank r;
  r.tracks.push_back({});
  auto kernel = [](int64_t ts, int64_t dur) {
    shardscope::model::Event e;
    e.cls = shardscope::model::IntervalClass::Compute;
    e.ts_ns = ts;
    e.dur_ns = dur;
    return e;
  };
  // [INT64_MIN, -1) and [0, 10) before the step at 100; [INT64_MAX - 10, INT64_MAX) after it.
  r.tracks[0].events = {kernel(INT64_MIN, INT64_MAX), kernel(0, 10), kernel(200, 10), kernel(INT64_MAX - 10, 10)};
  shardscope::model::Step st;
  st.number = 1;
  st.start_ns = st.host_start_ns = 100;
  st.end_ns = st.host_end_ns = 300;
  r.steps.push_back(st);
  DeviceSets sets = device_sets(r);
  OutsideSteps o = outside_steps(r, sets);
  EXPECT_EQ(o.before_events, 2u);
  EXPECT_EQ(o.before_ns, INT64_MAX);
  EXPECT_EQ(o.after_ns, 10);
  // HTA's whole µs: the start at INT64_MIN rounds up without negating it.
  auto b = hta_breakdown(r);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->window_us, (INT64_MAX / 1000) - (INT64_MIN / 1000));
}

// Nanosecond events where HTA's whole µs (start up, end down) tell another story: the HTA-compatible figures
// keep HTA's rounding, the exact ones beside them are the events' own.
TEST(Breakdown, ExactFiguresBesideHtasWholeMicroseconds) {
  using shardscope::model::IntervalClass;
  shardscope::model::Rank r;
  r.format = "nsys";
  r.tracks.push_back({0, 7, "GPU 0 stream 7", shardscope::model::TrackKind::DeviceStream, {}});
  auto ev = [](IntervalClass c, int64_t ts, int64_t end) {
    shardscope::model::Event e;
    e.cls = c;
    e.ts_ns = ts;
    e.dur_ns = end - ts;
    return e;
  };
  r.tracks[0].events = {ev(IntervalClass::Compute, 0, 1900), ev(IntervalClass::Communication, 1100, 2100),
                        ev(IntervalClass::Compute, 3100, 4000)};
  auto b = hta_breakdown(r);
  ASSERT_TRUE(b);
  // HTA: compute [0, 1] and [4, 4], communication [2, 2], in a window [0, 4] µs.
  EXPECT_EQ(b->window_us, 4);
  EXPECT_EQ(b->busy_us, 1);
  EXPECT_EQ(b->compute_us, 1);
  EXPECT_EQ(b->comm_us, 0);
  EXPECT_DOUBLE_EQ(b->compute_pct(), 25.0);
  EXPECT_DOUBLE_EQ(b->idle_pct(), 75.0);
  EXPECT_FALSE(b->overlap_pct());
  // Exact: busy [0, 2100) and [3100, 4000); communication [1100, 2100), under compute in [1100, 1900).
  EXPECT_EQ(b->window_ns, 4000);
  EXPECT_EQ(b->busy_ns, 3000);
  EXPECT_EQ(b->compute_ns, 2800);
  EXPECT_EQ(b->comm_ns, 1000);
  EXPECT_EQ(b->overlap_ns, 800);
  const WindowMetrics x = b->exact();
  EXPECT_DOUBLE_EQ(*x.compute_pct(), 70.0);
  EXPECT_DOUBLE_EQ(*x.idle_pct(), 25.0);
  EXPECT_DOUBLE_EQ(*x.overlap_pct(), 80.0);
  EXPECT_DOUBLE_EQ(*b->exact_non_compute_pct(), 5.0);
}
