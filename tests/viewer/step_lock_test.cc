// Run B locked to run A by step (viewer/model/step_offset.h), on hand-built steps with round numbers: at the
// whole-run view, mid-run and near the end, step k of B starts at the x where step k of A does, at A's zoom.
#include <gtest/gtest.h>

#include "viewer/model/step_offset.h"

using namespace shardscope;
using namespace shardscope::viewer;

namespace {
std::vector<model::Step> steps(std::initializer_list<std::tuple<int64_t, int64_t, int64_t>> list) {
  std::vector<model::Step> out;
  for (auto [n, lo, hi] : list) out.push_back({n, lo, hi, lo, hi, false});
  return out;
}
// A runs [1000, 33000) with 10 µs steps; B starts at 500 with 15 µs steps and is shorter than A at 800 px.
const std::vector<model::Step> kA = steps({{1, 2000, 12000}, {2, 12000, 22000}, {3, 22000, 32000}});
const std::vector<model::Step> kB = steps({{1, 1500, 16500}, {2, 16500, 31500}, {3, 31500, 46500}});
}  // namespace

TEST(StepLock, WholeRunViewPutsStepOneOverStepOne) {
  // A's whole run over 1000 px: 32 ns a pixel from 1000; its step 1 at x = (2000 - 1000) / 32 = 31.25.
  const Viewport a = Viewport::fit(1000, 33000, 1000);
  // B's trace starts at 1400, 100 ns before its step 1.
  const Viewport b = locked_view(a, kA, kB, 1000, 1400, 800);
  EXPECT_EQ(b.ns_per_px, 32.0);
  EXPECT_EQ(b.width_px, 800);
  // B's step 1 (1500) at the same x: B's view starts 1000 ns before it, at 500, before B's own start (held
  // there, B's step 1 would sit at x 3.125).
  EXPECT_EQ(b.start_ns, 500.0);
  EXPECT_EQ(b.x_of(1500), 31.25);
  EXPECT_EQ(a.x_of(2000), 31.25);
}

TEST(StepLock, MidRunKeepsTheTimeIntoTheStep) {
  // A 2000 ns into its step 2 at 10 ns a pixel: B 2000 ns into its own step 2, 16500 + 2000.
  const Viewport a{14000, 10, 1000};
  const Viewport b = locked_view(a, kA, kB, 1000, 500, 800);
  EXPECT_EQ(b.start_ns, 18500.0);
  EXPECT_EQ(b.ns_per_px, 10.0);
  EXPECT_EQ(b.x_of(16500), -200.0);  // step 2 starts 200 px left of the view in both
  EXPECT_EQ(a.x_of(12000), -200.0);
}

TEST(StepLock, NearTheEndIsNotHeldToBsEnd) {
  // A 8000 ns into its last step, 32 ns a pixel: its view ends at 30000 + 32000, past its run. B 8000 ns
  // into its step 3 (39500), not pulled back so that its view ends at B's end.
  const Viewport a{30000, 32, 1000};
  EXPECT_EQ(locked_view(a, kA, kB, 1000, 500, 800).start_ns, 39500.0);
  // B without a step 3: B keeps its step 2 offset (16500 - 12000), not the runs' starts (-500).
  const std::vector<model::Step> two(kB.begin(), kB.begin() + 2);
  EXPECT_EQ(*step_offset(kA, two, 30000), 4500);
  EXPECT_EQ(locked_view(a, kA, two, 1000, 500, 800).start_ns, 34500.0);
}

TEST(StepLock, StepsMatchByNumberThenByPlace) {
  // Before A's first step: the first step. B numbered 5..7 (a later profiler window): by place.
  EXPECT_EQ(*step_offset(kA, kB, 0), -500);
  const std::vector<model::Step> later = steps({{5, 100, 200}, {6, 200, 300}, {7, 300, 400}});
  EXPECT_EQ(*step_offset(kA, later, 12500), 200 - 12000);
  // B holding A's step 2 alone: matched by number wherever it sits.
  EXPECT_EQ(*step_offset(kA, steps({{2, 7000, 9000}}), 15000), 7000 - 12000);
  // No steps on a side: the runs' starts line up.
  EXPECT_FALSE(step_offset(kA, {}, 15000));
  EXPECT_EQ(locked_view(Viewport{15000, 10, 1000}, kA, {}, 1000, 500, 800).start_ns, 14500.0);
}
