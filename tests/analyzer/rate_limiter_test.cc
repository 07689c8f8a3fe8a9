// check_prefetch's "throttled by the rate limiter" on trace files in the trainer's format: an all-gather
// whose issue waited for an earlier all-gather to complete while the all-gathers in flight were at the limit
// (limit_all_gathers in run_config, the trainer's "rate_limited" marks) gets it; the same device timeline
// without the limiter, and a well-prefetched run with the limiter on, do not.
#include <gtest/gtest.h>

#include "analyzer/metrics/prefetch.h"
#include "tests/analyzer/prefetch_check.h"

using namespace shardscope;
using metrics::Verdict;

namespace {

metrics::RankPrefetch check_limited(const test::TrainerTraceOptions& o) { return test::check_prefetch_of(o); }

// BACKWARD_PRE as FSDP issues it on a GPU (the prefetch goes out before the unit's own all-gather is
// waited for), all-gathers longer than a unit's backward compute, and a limit of one in flight: at each
// pre-backward hook the unit's own all-gather is still running, so the prefetch waits for it to complete.
test::TrainerTraceOptions throttled_layout(int limit) {
  test::TrainerTraceOptions o;
  o.issue_before_wait = true;
  o.limit_all_gathers = limit;
  o.all_gather_ns = 300'000;
  o.backward_ns = 100'000;
  o.reduce_scatter_ns = 1'000;
  return o;
}

TEST(RateLimiter, AnIssueThatWaitedAtTheLimitIsThrottled) {
  test::TrainerTraceOptions o = throttled_layout(1);
  metrics::RankPrefetch p = check_limited(o);
  ASSERT_EQ(p.steps.size(), 2u);
  for (const metrics::StepPrefetch& s : p.steps) {
    EXPECT_EQ(s.verdict, Verdict::NotEffective);
    EXPECT_EQ(s.cause, metrics::Cause::Throttled);
    EXPECT_EQ(p.limit, 1);
    ASSERT_EQ(s.units.size(), size_t(o.units - 1));
    for (const metrics::UnitPrefetch& u : s.units) {
      EXPECT_TRUE(u.throttled) << "unit " << u.unit;
      // Issued when the unit's own all-gather completed, hook_ns before its compute: in order, not late.
      EXPECT_EQ(u.issue_lead_ns, o.hook_ns);
      EXPECT_EQ(u.hidden_ns, o.backward_ns);  // only BC_i's 100 µs of the 300 µs all-gather are hidden
    }
  }
}

TEST(RateLimiter, TheSameTimelineWithoutTheLimitIsNotThrottled) {
  // A limit of two never binds here: each prefetch is issued in its hook at once. The device timeline is
  // the same (the all-gathers queue on one stream), so the step is still not effective, for another reason.
  test::TrainerTraceOptions o = throttled_layout(2);
  metrics::RankPrefetch p = check_limited(o);
  ASSERT_EQ(p.steps.size(), 2u);
  for (const metrics::StepPrefetch& s : p.steps) {
    EXPECT_EQ(s.verdict, Verdict::NotEffective);
    EXPECT_NE(s.cause, metrics::Cause::Throttled);
    EXPECT_NE(s.cause, metrics::Cause::None);
    for (const metrics::UnitPrefetch& u : s.units) {
      EXPECT_FALSE(u.throttled) << "unit " << u.unit;
      EXPECT_GT(u.issue_lead_ns, o.hook_ns);  // issued in the hook, before the own all-gather completed
    }
  }
}

TEST(RateLimiter, AWellPrefetchedRunWithTheLimiterOnIsEffective) {
  test::TrainerTraceOptions o;
  o.limit_all_gathers = 2;
  metrics::RankPrefetch p = check_limited(o);
  EXPECT_EQ(p.verdict, Verdict::Effective);
  for (const metrics::StepPrefetch& s : p.steps) {
    EXPECT_EQ(s.verdict, Verdict::Effective) << int(s.cause);
    for (const metrics::UnitPrefetch& u : s.units) EXPECT_FALSE(u.throttled);
  }
}

}  // namespace
