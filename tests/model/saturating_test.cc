// The saturating int64 helpers at the extremes: a trace file may put any int64 anywhere, so each must hold at
// the bound instead of wrapping (which UBSan, under scripts/sanitize, reports as signed overflow).
#include <gtest/gtest.h>

#include "model/saturating.h"

using namespace shardscope::model;

namespace {

constexpr int64_t kMax = INT64_MAX, kMin = INT64_MIN;

TEST(Saturating, AddHoldsAtTheBounds) {
  EXPECT_EQ(sat_add(kMax, 1), kMax);
  EXPECT_EQ(sat_add(kMax, kMax), kMax);
  EXPECT_EQ(sat_add(kMin, -1), kMin);
  EXPECT_EQ(sat_add(kMin, kMin), kMin);
  EXPECT_EQ(sat_add(kMax, kMin), -1);  // in range: exact
  EXPECT_EQ(sat_add(40, 2), 42);
}

TEST(Saturating, SubHoldsAtTheBounds) {
  EXPECT_EQ(sat_sub(kMax, kMin), kMax);
  EXPECT_EQ(sat_sub(kMin, kMax), kMin);
  EXPECT_EQ(sat_sub(kMin, 1), kMin);
  EXPECT_EQ(sat_sub(0, kMin), kMax);  // −INT64_MIN does not fit
  EXPECT_EQ(sat_sub(-1, kMin), kMax);
  EXPECT_EQ(sat_sub(kMin, kMin), 0);
  EXPECT_EQ(sat_sub(5, 7), -2);
}

TEST(Saturating, MulHoldsAtTheBoundsWithTheProductsSign) {
  EXPECT_EQ(sat_mul(kMax, 2), kMax);
  EXPECT_EQ(sat_mul(kMin, 2), kMin);
  EXPECT_EQ(sat_mul(kMin, -1), kMax);
  EXPECT_EQ(sat_mul(kMax / 1000 + 1, 1000), kMax);  // µs → ns past the range
  EXPECT_EQ(sat_mul(-(kMax / 1000) - 2, 1000), kMin);
  EXPECT_EQ(sat_mul(kMax / 1000, 1000), kMax / 1000 * 1000);  // in range: exact
  EXPECT_EQ(sat_mul(-3, 4), -12);
}

TEST(Saturating, DiffAndNegStayNegatable) {
  EXPECT_EQ(sat_diff(kMin, kMax), -kMax);  // not INT64_MIN: a report may negate it
  EXPECT_EQ(sat_diff(kMax, kMin), kMax);
  EXPECT_EQ(sat_neg(sat_diff(kMin, 1)), kMax);
  EXPECT_EQ(sat_neg(kMin), kMax);
  EXPECT_EQ(sat_neg(kMax), -kMax);
  EXPECT_EQ(sat_diff(3, 10), -7);
}

}  // namespace
