// The area selection's table (viewer/model/area_slices.h) and the marks (marks.h) on hand-built slices:
// which slices an area takes (edges, instants, tracks outside it, a track named twice), their count, total,
// mean and max by name across ranks, the order, and the clipboard's text; the numbers are worked out below.
#include <gtest/gtest.h>

#include "viewer/model/area_slices.h"
#include "viewer/model/marks.h"

namespace shardscope::viewer {
namespace {

model::Event ev(model::Rank& r, std::string_view name, int64_t ts, int64_t dur, char ph = 'X') {
  model::Event e;
  e.ts_ns = ts;
  e.dur_ns = dur;
  e.ph = ph;
  e.name = r.strings.intern(name);
  return e;
}

model::Track track(model::TrackKind kind, std::vector<model::Event> events) {
  model::Track t;
  t.kind = kind;
  t.events = std::move(events);
  return t;
}

// The area [100, 800) over rank 0's tracks 0 and 1 and rank 1's track 0.
struct Area : ::testing::Test {
  model::Trace trace;
  void SetUp() override {
    using K = model::TrackKind;
    model::Rank& r0 = trace.ranks.emplace_back();
    r0.rank = 0;
    r0.tracks.push_back(track(K::DeviceStream, {ev(r0, "gemm", 0, 100),  // ends on lo: out
                                                ev(r0, "gemm", 150, 100), ev(r0, "nccl", 300, 400),
                                                ev(r0, "gemm", 900, 100)}));   // after hi: out
    r0.tracks.push_back(track(K::HostThread, {ev(r0, "launch", 50, 10),        // before lo: out
                                              ev(r0, "mark", 100, 0),          // an instant on lo: in
                                              ev(r0, "mark", 800, 0),          // an instant on hi: out
                                              ev(r0, "flag", 200, 0, 'i')}));  // not a complete slice: out
    model::Rank& r1 = trace.ranks.emplace_back();
    r1.rank = 1;
    r1.tracks.push_back(track(K::DeviceStream, {ev(r1, "nccl", 0, 150),  // crosses lo: in, whole 150
                                                ev(r1, "gemm", 120, 301), ev(r1, "a\tb", 500, 3)}));
    r1.tracks.push_back(track(K::DeviceStream, {ev(r1, "gemm", 200, 100)}));  // not in the area
  }
};

TEST_F(Area, CountsTotalsMeansAndMaxByNameHeaviestFirst) {
  TimelineLayout layout(trace);
  // Rank 0's stream named twice: its slices count once.
  auto groups = area_slices(layout, {{0, 0}, {0, 1}, {1, 0}, {0, 0}}, 100, 800);
  ASSERT_EQ(groups.size(), 4u);
  // nccl: 400 (rank 0) + 150 (rank 1) = 550 over 2, max 400.
  EXPECT_EQ(groups[0].name, "nccl");
  EXPECT_EQ(groups[0].count, 2u);
  EXPECT_EQ(groups[0].total_ns, 550);
  EXPECT_EQ(groups[0].max_ns, 400);
  EXPECT_DOUBLE_EQ(groups[0].mean_ns(), 275.0);
  // gemm: 100 (rank 0, at 150) + 301 (rank 1) = 401 over 2: mean 200.5.
  EXPECT_EQ(groups[1].name, "gemm");
  EXPECT_EQ(groups[1].count, 2u);
  EXPECT_EQ(groups[1].total_ns, 401);
  EXPECT_EQ(groups[1].max_ns, 301);
  EXPECT_DOUBLE_EQ(groups[1].mean_ns(), 200.5);
  EXPECT_EQ(groups[2].name, "a\tb");
  EXPECT_EQ(groups[2].total_ns, 3);
  EXPECT_EQ(groups[3].name, "mark");
  EXPECT_EQ(groups[3].count, 1u);
  EXPECT_EQ(groups[3].total_ns, 0);

  // One line per name, the tab in "a\tb" a space; 200.5 rounds to 201.
  EXPECT_EQ(area_tsv(groups),
            "name\tcount\ttotal_ns\tmean_ns\tmax_ns\n"
            "nccl\t2\t550\t275\t400\n"
            "gemm\t2\t401\t201\t301\n"
            "a b\t1\t3\t3\t3\n"
            "mark\t1\t0\t0\t0\n");
}

TEST_F(Area, OnlyTheAreasTracksAndTime) {
  TimelineLayout layout(trace);
  // Rank 1's second stream alone, [250, 260): its gemm [200, 300) overlaps.
  auto groups = area_slices(layout, {{1, 1}}, 250, 260);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].name, "gemm");
  EXPECT_EQ(groups[0].total_ns, 100);
  EXPECT_TRUE(area_slices(layout, {{1, 1}}, 300, 400).empty());  // starts where the slice ends
  EXPECT_TRUE(area_slices(layout, {}, 0, 1000).empty());
  EXPECT_TRUE(area_slices(layout, {{0, 0}}, 800, 100).empty());         // a backwards range
  EXPECT_TRUE(area_slices(layout, {{7, 0}, {0, 9}}, 0, 1000).empty());  // no such rank or track
  EXPECT_EQ(area_tsv({}), "name\tcount\ttotal_ns\tmean_ns\tmax_ns\n");
}

// --area's text: times from the run's start with their units; everything else refused with why.
TEST(AreaSpan, TimesWithUnitsFromTheRunStart) {
  std::string error;
  auto span = parse_area_span("120ms:180ms", &error);
  ASSERT_TRUE(span) << error;
  EXPECT_EQ(span->lo_ns, 120'000'000);
  EXPECT_EQ(span->hi_ns, 180'000'000);
  span = parse_area_span("0ns:1.5s", &error);
  ASSERT_TRUE(span) << error;
  EXPECT_EQ(span->lo_ns, 0);
  EXPECT_EQ(span->hi_ns, 1'500'000'000);
  span = parse_area_span("250us:251us", &error);
  ASSERT_TRUE(span) << error;
  EXPECT_EQ(span->hi_ns - span->lo_ns, 1000);
  for (const char* bad : {"120ms", "120:180ms", "120ms:180", "-5ms:10ms", "10ms:10ms", "20ms:10ms", "a:b",
                          "1ms:2ms:3ms", "", ":", "1 ms:2ms", "nanms:1ms", "1e30s:2e30s", "5ms:6min"}) {
    error.clear();
    EXPECT_FALSE(parse_area_span(bad, &error)) << bad;
    EXPECT_NE(error.find("--area"), std::string::npos) << bad;
  }
  parse_area_span("120:180ms", &error);
  EXPECT_NE(error.find("needs a unit"), std::string::npos) << error;
  parse_area_span("20ms:10ms", &error);
  EXPECT_NE(error.find("after the start"), std::string::npos) << error;
}

TEST(AreaSpan, AStepByItsNumber) {
  std::string error;
  auto span = parse_area_span("step:552", &error);
  ASSERT_TRUE(span) << error;
  ASSERT_TRUE(span->step);
  EXPECT_EQ(*span->step, 552);
  for (const char* bad : {"step:", "step:-1", "step:x", "step:3ms", "step:1:2"}) {
    error.clear();
    EXPECT_FALSE(parse_area_span(bad, &error)) << bad;
    EXPECT_NE(error.find("step:N"), std::string::npos) << bad << ": " << error;
  }
}

// Step 7 on rank 0 [100, 300) and rank 1 [150, 420): the area spans [100, 420); step 8 only on rank 1.
TEST_F(Area, AStepsWindowCoversEveryRanksStep) {
  trace.ranks[0].steps.push_back({7, 100, 300});
  trace.ranks[1].steps.push_back({7, 150, 420});
  trace.ranks[1].steps.push_back({8, 420, 500});
  TimelineLayout layout(trace);
  EXPECT_EQ(step_window(layout, 7), (std::pair<int64_t, int64_t>{100, 420}));
  EXPECT_EQ(step_window(layout, 8), (std::pair<int64_t, int64_t>{420, 500}));
  EXPECT_FALSE(step_window(layout, 9));
}

TEST(Marks, MOnAMarkTakesItAway) {
  std::vector<TimeMark> marks;
  EXPECT_TRUE(toggle_mark(marks, 100, 200));
  EXPECT_TRUE(toggle_mark(marks, 500, 400));  // held as [400, 500)
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[1], (TimeMark{400, 500}));
  EXPECT_TRUE(toggle_mark(marks, 100, 201));  // not the same range: a third mark
  EXPECT_FALSE(toggle_mark(marks, 100, 200));
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0], (TimeMark{400, 500}));
  EXPECT_EQ(marks[1], (TimeMark{100, 201}));
  EXPECT_FALSE(toggle_mark(marks, 400, 500));
  EXPECT_FALSE(toggle_mark(marks, 100, 201));
  EXPECT_TRUE(marks.empty());
}

}  // namespace
}  // namespace shardscope::viewer
