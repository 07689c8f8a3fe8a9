// check_prefetch on real trace files in the trainer's format: the BACKWARD_PRE layout is effective, the
// "none" layout is not (issued late), and the other reasons SPEC names come out when their cause is built in.
#include <gtest/gtest.h>

#include "analyzer/metrics/prefetch.h"
#include "tests/analyzer/prefetch_check.h"
#include "tracer/format/keys.h"

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

// Issue times from a hostile file at the int64 extremes: issue leads and queueing times are held within
// ±INT64_MAX (a report negates a lead: −INT64_MIN would overflow), and the step the check makes up when the
// trace has none ends at INT64_MAX, not one past it.
TEST(Prefetch, IssueTimesAtTheInt64ExtremesSaturate) {
  model::Rank r;
  r.rank = 0;
  r.tracks.resize(2);
  const model::StringId bc = r.strings.intern(keys::kUnitBackward), ag = r.strings.intern("all_gather");
  auto backward = [&](int unit, int64_t ts, int64_t dur) {
    model::Event e;
    e.name = bc;
    e.unit = unit;
    e.ts_ns = ts;
    e.dur_ns = dur;
    return e;
  };
  auto gather = [&](int unit, int64_t issued, int64_t ts) {
    model::Event e;
    e.name = ag;
    e.cls = model::IntervalClass::Communication;
    e.coll = model::CollectiveKind::AllGather;
    e.unit = unit;
    e.issued_ns = issued;
    e.ts_ns = ts;
    e.dur_ns = 10;
    return e;
  };
  // BC_2 (and its AG_2) at the start of time; AG_1 issued near its end, long after BC_2 was: a lead below −INT64_MAX.
  // AG_0 issued near the start of time and started near its end: a lead and a queue past INT64_MAX.
  // BC_0 ends at INT64_MAX.
  r.tracks[0].events = {backward(2, INT64_MIN + 100, 100), backward(1, 1000, 100), backward(0, INT64_MAX - 10, 10)};
  r.tracks[1].events = {gather(2, INT64_MIN + 100, INT64_MIN + 100), gather(1, INT64_MAX - 2000, 0),
                        gather(0, INT64_MIN + 150, INT64_MAX - 1000)};
  metrics::RankPrefetch p = metrics::check_prefetch(r);
  ASSERT_EQ(p.steps.size(), 1u);
  ASSERT_EQ(p.steps[0].units.size(), 2u);
  const metrics::UnitPrefetch &u1 = p.steps[0].units[0], &u0 = p.steps[0].units[1];
  EXPECT_EQ(u1.next_unit, 1);
  EXPECT_EQ(u1.issue_lead_ns, -INT64_MAX);
  EXPECT_EQ(u1.cause, metrics::Cause::IssuedLate);
  EXPECT_EQ(u0.next_unit, 0);
  EXPECT_EQ(u0.issue_lead_ns, INT64_MAX);
  EXPECT_EQ(u0.queued_ns, INT64_MAX);
  EXPECT_EQ(p.steps[0].ag_ns, 20);
  EXPECT_EQ(p.verdict, Verdict::NotEffective);
}

}  // namespace
