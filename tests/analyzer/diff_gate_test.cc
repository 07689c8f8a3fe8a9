// diff's noise test and --fail-on thresholds, on values worked out by hand: the exact Mann-Whitney p-values
// below are counts of splits (itertools.combinations over the pooled mid-ranks, two-sided), not this code's.
#include <gtest/gtest.h>

#include <cmath>
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

TEST(RunNoise, StudentTCriticalValues) {
  // t's 0.975 quantile (R: qt(0.975, df)): the table, then the expansion above 30.
  EXPECT_NEAR(a::student_t_critical(1), 12.7062, 1e-4);
  EXPECT_NEAR(a::student_t_critical(2), 4.3027, 1e-4);
  EXPECT_NEAR(a::student_t_critical(30), 2.0423, 1e-4);
  EXPECT_NEAR(a::student_t_critical(31), 2.0395, 2e-4);
  EXPECT_NEAR(a::student_t_critical(60), 2.0003, 2e-4);
  EXPECT_NEAR(a::student_t_critical(1000), 1.9623, 2e-4);
}

TEST(RunNoise, OneRunASideTakesTheFloor) {
  // 5 steps a side, wholly separated: p = 2 / C(10,5) = 2/252. Medians 102 and 108: +5.882%.
  const std::vector<std::vector<double>> a_runs = {{104, 100, 102, 101, 103}}, b_runs = {{106, 110, 108, 107, 109}};
  for (auto [floor, expect] : {std::pair{10.0, a::Noise::WithinFloor},
                               {5.9, a::Noise::WithinFloor},
                               {5.8, a::Noise::Beyond},
                               {0.0, a::Noise::Beyond}}) {
    a::RunChange c = a::judge_steps("step_time_ms", a::ChangeUnit::Ms, a_runs, b_runs, {.floor_pct = floor});
    EXPECT_EQ(c.run_noise, a::RunNoise::Floor);
    EXPECT_DOUBLE_EQ(c.floor_pct, floor);
    EXPECT_NEAR(c.p, 2.0 / 252, 1e-12);
    EXPECT_EQ(c.noise, expect) << "floor " << floor;
    EXPECT_EQ(c.beyond_noise(), expect == a::Noise::Beyond);
  }
  // Under the floor or not, steps that do not separate stay within the noise (interleaved: p = 1).
  a::RunChange mixed = a::judge_steps("step_time_ms", a::ChangeUnit::Ms, {{100, 120, 101, 119}}, {{121, 99, 118, 102}},
                                      {.floor_pct = 0});
  EXPECT_EQ(mixed.noise, a::Noise::Within);
  EXPECT_EQ(mixed.run_noise, a::RunNoise::Floor);
}

TEST(RunNoise, SeveralRunsTakeTheSpreadBetweenThem) {
  // Every B step is slower than every A step (6 and 6: p = 2/924), but B's two runs sit 16 apart: run
  // medians A 100.5, 102.5, B 104.5, 120.5; change of the means 11; pooled variance (1+1+64+64)/2 = 65;
  // bound t(2) · sqrt(65 · (1/2 + 1/2)) = 4.3027 · 8.0623 = 34.69. Within it, whatever the floor.
  a::RunChange c = a::judge_steps("step_time_ms", a::ChangeUnit::Ms, {{100, 100.5, 101}, {102, 102.5, 103}},
                                  {{104, 104.5, 105}, {120, 120.5, 121}}, {.floor_pct = 0});
  EXPECT_NEAR(c.p, 2.0 / 924, 1e-12);
  EXPECT_EQ(c.run_noise, a::RunNoise::BetweenRuns);
  EXPECT_EQ(c.a_runs, (std::vector<double>{100.5, 102.5}));
  EXPECT_EQ(c.b_runs, (std::vector<double>{104.5, 120.5}));
  EXPECT_NEAR(c.run_change, 11, 1e-12);
  EXPECT_NEAR(c.run_bound, 4.3027 * std::sqrt(65.0), 1e-3);
  EXPECT_EQ(c.noise, a::Noise::WithinRuns);
  EXPECT_FALSE(c.beyond_noise());
  // Runs that agree: medians 100.5, 101.5 and 110.5, 111.5; variance (4 · 0.25) / 2 = 0.5; bound
  // 4.3027 · sqrt(0.5) = 3.04 < 10: beyond, even with a floor over the change (the floor is for one run a side).
  a::RunChange d = a::judge_steps("step_time_ms", a::ChangeUnit::Ms, {{100, 100.5, 101}, {101, 101.5, 102}},
                                  {{110, 110.5, 111}, {111, 111.5, 112}}, {.floor_pct = 50});
  EXPECT_NEAR(d.run_bound, 4.3027 * std::sqrt(0.5), 1e-3);
  EXPECT_EQ(d.noise, a::Noise::Beyond);
  // Two runs against one: 1 degree of freedom, t = 12.706. A medians 100, 102, B 109.5: change 8.5, bound
  // 12.7062 · sqrt(2 · (1/2 + 1)) = 22.01: within. A run without steps is left out of its side.
  a::RunChange e = a::judge_steps("step_time_ms", a::ChangeUnit::Ms, {{99, 100, 101}, {101, 102, 103}, {}},
                                  {{108, 109, 110, 111}}, {});
  EXPECT_NEAR(e.p, 2.0 / 210, 1e-12);
  EXPECT_EQ(e.run_noise, a::RunNoise::BetweenRuns);
  EXPECT_NEAR(e.run_bound, 12.7062 * std::sqrt(3.0), 1e-3);
  EXPECT_EQ(e.noise, a::Noise::WithinRuns);
}
