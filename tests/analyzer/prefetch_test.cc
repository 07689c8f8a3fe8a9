// check_prefetch on real trace files in the trainer's format: the BACKWARD_PRE layout is effective, the
// "none" layout is not (issued late), and the other reasons SPEC names come out when their cause is built in.
#include <gtest/gtest.h>

#include "analyzer/metrics/prefetch.h"
#include "tests/analyzer/prefetch_check.h"

using namespace shardscope;
using metrics::Verdict;

namespace {

metrics::RankPrefetch check(const test::TrainerTraceOptions& o) { return test::check_prefetch_of(o); }

TEST(Prefetch, BackwardPreIsEffective) {
  test::TrainerTraceOptions o;
  metrics::RankPrefetch p = check(o);
  EXPECT_EQ(p.configured, "pre");
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.verdict, Verdict::Effective);
  for (const auto& s : p.steps) {
    EXPECT_EQ(s.verdict, Verdict::Effective) << int(s.cause);
    ASSERT_EQ(s.units.size(), size_t(o.units - 1));
    for (const auto& u : s.units) {
      EXPECT_EQ(u.next_unit, u.unit - 1);
      // Issued in unit i's hook, hook_ns before BC_i starts.
      EXPECT_EQ(u.issue_lead_ns, o.hook_ns);
      EXPECT_EQ(u.ag_ns, o.all_gather_ns);
      if (u.unit == o.units - 1) {
        // The first prefetch starts at once, in the hook: only the hook's 5 µs are not under BC_i.
        EXPECT_EQ(u.hidden_ns, o.all_gather_ns - o.hook_ns);
        EXPECT_EQ(u.exposed_wait_ns, o.hook_ns);
      } else {
        // Later ones wait behind the previous unit's reduce-scatter, then run entirely under BC_i.
        EXPECT_EQ(u.hidden_ns, o.all_gather_ns);
        EXPECT_EQ(u.exposed_wait_ns, 0);
        EXPECT_TRUE(u.serialized_behind_rs);
      }
    }
  }
}

TEST(Prefetch, NoneIsIssuedLate) {
  test::TrainerTraceOptions o;
  o.prefetch = "none";
  metrics::RankPrefetch p = check(o);
  EXPECT_EQ(p.verdict, Verdict::NotEffective);
  for (const auto& s : p.steps) {
    EXPECT_EQ(s.verdict, Verdict::NotEffective);
    EXPECT_EQ(s.cause, metrics::Cause::IssuedLate);
    for (const auto& u : s.units) {
      // Issued when BC_i ended: the lead is minus BC_i's length.
      EXPECT_EQ(u.issue_lead_ns, -o.backward_ns);
      // It then waited for BC_i's reduce-scatter, and nothing computes while it runs.
      EXPECT_EQ(u.hidden_ns, 0);
      EXPECT_EQ(u.exposed_wait_ns, o.all_gather_ns);
    }
  }
}

TEST(Prefetch, IssuedInOrderButNoComputeToHideIt) {
  test::TrainerTraceOptions o;
  o.backward_ns = 100'000;  // shorter than the all-gather (300 µs) and the reduce-scatter it queues behind
  o.reduce_scatter_ns = 10'000;
  metrics::RankPrefetch p = check(o);
  EXPECT_EQ(p.verdict, Verdict::NotEffective);
  EXPECT_EQ(p.steps[0].cause, metrics::Cause::LongerThanCompute);
}

TEST(Prefetch, SerializedBehindAReduceScatter) {
  test::TrainerTraceOptions o;
  o.reduce_scatter_ns = 1'500'000;  // each prefetch waits behind the previous unit's long reduce-scatter
  metrics::RankPrefetch p = check(o);
  EXPECT_EQ(p.verdict, Verdict::NotEffective);
  EXPECT_EQ(p.steps[0].cause, metrics::Cause::QueuedBehindReduceScatter);
}

TEST(Prefetch, NotApplicableWithoutUnits) {
  model::Rank r;
  r.rank = 0;
  metrics::RankPrefetch p = metrics::check_prefetch(r);
  EXPECT_EQ(p.verdict, Verdict::NotApplicable);
  EXPECT_EQ(p.na, metrics::NotApplicable::NoUnitCompute);
}

}  // namespace
