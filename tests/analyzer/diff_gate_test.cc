// diff's noise test and --fail-on thresholds, on values worked out by hand: the exact Mann-Whitney p-values
// below are counts of splits (itertools.combinations over the pooled mid-ranks, two-sided), not this code's.
#include <gtest/gtest.h>

#include <stdexcept>

#include "analyzer/analysis/diff_gate.h"
#include "analyzer/analysis/rank_test.h"

namespace a = shardscope::analysis;

TEST(RankTest, ExactPValues) {
  // Complete separation of 4 and 4: 2 of the C(8,4) = 70 splits are as extreme.
  EXPECT_NEAR(a::mann_whitney_p({1, 2, 3, 4}, {5, 6, 7, 8}), 2.0 / 70, 1e-12);
  EXPECT_NEAR(a::mann_whitney_p({5, 6, 7, 8}, {1, 2, 3, 4}), 2.0 / 70, 1e-12);
  // Interleaved: 48 of 70 splits are at least as far from the mean rank sum.
  EXPECT_NEAR(a::mann_whitney_p({1, 3, 5, 7}, {2, 4, 6, 8}), 48.0 / 70, 1e-12);
  // Ties across the sides take mid-ranks: 6 of 252 splits.
  EXPECT_NEAR(a::mann_whitney_p({10, 10, 11, 12, 12}, {12, 13, 13, 14, 15}), 6.0 / 252, 1e-12);
  EXPECT_DOUBLE_EQ(a::mann_whitney_p({100, 101, 99, 102, 100, 98}, {100, 99, 101, 103, 97, 100}), 1.0);
  EXPECT_DOUBLE_EQ(a::mann_whitney_p({}, {1, 2}), 1.0);
}

TEST(RankTest, SmallestPSaysWhenNothingCanBeTold) {
  EXPECT_NEAR(a::smallest_p(3, 3), 0.1, 1e-12);       // 2 / 20
  EXPECT_NEAR(a::smallest_p(4, 4), 2.0 / 70, 1e-12);  // under 0.05
  EXPECT_NEAR(a::smallest_p(3, 5), 2.0 / 56, 1e-12);
  EXPECT_GT(a::smallest_p(3, 4), a::kNoiseAlpha);  // 2 / 35
}

TEST(RankTest, LargeSamplesUseTheNormalApproximation) {
  std::vector<double> x, y;
  for (int i = 0; i < 40; ++i) x.push_back(i), y.push_back(i + 100);
  // Complete separation of 40 and 40: z = (|W - E| - 0.5) / sd = (800 - 0.5) / sqrt(40·40·81/12) = 7.69.
  EXPECT_LT(a::mann_whitney_p(x, y), 1e-13);
  EXPECT_GT(a::mann_whitney_p(x, y), 0.0);
}

TEST(FailOn, ParsesTheIssuesExpression) {
  auto t = a::parse_gate("step_time>+5%,exposed_comm>+2pp, memory_peak>+512MiB,prefetch=not_effective");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].name, "step_time");
  EXPECT_EQ(t[0].unit, a::GateUnit::Relative);
  EXPECT_DOUBLE_EQ(t[0].value, 5);
  EXPECT_EQ(t[1].unit, a::GateUnit::Points);
  EXPECT_DOUBLE_EQ(t[2].value, 512.0 * 1024 * 1024);
  EXPECT_EQ(t[3].op, a::GateOp::Is);
  EXPECT_EQ(t[3].verdict, shardscope::metrics::Verdict::NotEffective);
  auto b = a::parse_gate("all_gather_busbw_gbps<-10%");
  EXPECT_EQ(b[0].op, a::GateOp::Below);
  EXPECT_DOUBLE_EQ(b[0].value, -10);
}

TEST(FailOn, BadTermsAreNamed) {
  for (auto [expr, term] : {std::pair{"step_time>+5%,stp_time>+5%", "stp_time>+5%"},
                            {"step_time>+5parsecs", "step_time>+5parsecs"},
                            {"step_time>+5%,,idle>+1ms", ""},
                            {"step_time", "step_time"},
                            {"step_time=+5%", "step_time=+5%"},
                            {"prefetch=maybe", "prefetch=maybe"}}) {
    try {
      a::parse_gate(expr);
      ADD_FAILURE() << expr << " parsed";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("bad term '") + term + "'"), std::string::npos) << e.what();
    }
  }
}

namespace {

a::RunChange change(const char* key, a::ChangeUnit unit, std::vector<double> sa, std::vector<double> sb,
                    bool per_step) {
  a::RunChange c{.key = key, .unit = unit, .per_step = per_step, .a_samples = sa, .b_samples = sb};
  c.a = sa.empty() ? std::nullopt : std::optional<double>(sa[sa.size() / 2]);
  c.b = sb.empty() ? std::nullopt : std::optional<double>(sb[sb.size() / 2]);
  return c;
}

}  // namespace

TEST(FailOn, FailsOnlyBeyondTheNoiseAndFailingLinesComeFirst) {
  a::SidesDiff d;
  // Step time +10% (100 → 110) and wholly separated: p = 2/70, beyond.
  auto step = change("step_time_ms", a::ChangeUnit::Ms, {99, 100, 100, 101}, {109, 110, 110, 111}, true);
  step.noise = a::Noise::Beyond;
  // Exposed share +3 pp but within the noise.
  auto exposed = change("exposed_comm_pct", a::ChangeUnit::Pct, {10, 20, 30}, {5, 23, 40}, true);
  exposed.noise = a::Noise::Within;
  auto mem = change("memory_peak_bytes", a::ChangeUnit::Bytes, {1e9}, {1e9 + 600.0 * 1048576}, false);
  mem.noise = a::Noise::NoSpread;
  d.changes = {step, exposed, mem};
  d.prefetch_a = shardscope::metrics::Verdict::Effective, d.prefetch_b = shardscope::metrics::Verdict::Effective;
  auto r = a::evaluate_gate(
      a::parse_gate("exposed_comm>+2pp,step_time>+5%,memory_peak>+512MiB,prefetch=not_effective,step_time>+20%"), d);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0].term.text, "step_time>+5%");
  EXPECT_EQ(r[0].outcome, a::GateOutcome::Fail);
  EXPECT_NEAR(*r[0].change_value, 10.0, 1e-9);
  EXPECT_EQ(r[1].term.text, "memory_peak>+512MiB");  // +600 MiB, one run a side: as is
  EXPECT_EQ(r[1].outcome, a::GateOutcome::Fail);
  EXPECT_EQ(r[2].term.text, "exposed_comm>+2pp");  // crossed, within noise: passes
  EXPECT_TRUE(r[2].crossed);
  EXPECT_EQ(r[2].outcome, a::GateOutcome::Pass);
  EXPECT_EQ(r[3].outcome, a::GateOutcome::Pass);  // prefetch effective in B
  EXPECT_FALSE(r[4].crossed);                     // +10% is under +20%
  EXPECT_EQ(a::gate_exit_code(r), 1);
  EXPECT_EQ(a::gate_exit_code(a::evaluate_gate(a::parse_gate("step_time>+20%"), d)), 0);
  // A figure neither run has cannot be judged: exit 2.
  EXPECT_EQ(a::gate_exit_code(a::evaluate_gate(a::parse_gate("all_reduce_time>+1%"), d)), 2);
}
