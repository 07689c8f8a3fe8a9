// Each cause of a backward prefetch that is not effective, on a constructed timeline whose durations are
// known: the cause check_prefetch names, and the numbers the report's sentence for it gives, which must be
// the constructed ones.
#include <algorithm>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "analyzer/metrics/prefetch.h"
#include "analyzer/report/prefetch_render.h"
#include "tests/analyzer/prefetch_check.h"
#include "tracer/format/keys.h"

using namespace shardscope;
using metrics::Cause;
using metrics::Verdict;

namespace {

constexpr int64_t kUs = 1'000;
constexpr int64_t T = 10'000 * kUs;        // BC_1 (unit 1's backward compute) starts here
constexpr int64_t kCompute = 800 * kUs;    // BC_1's length
constexpr int64_t kNext = T + 3000 * kUs;  // BC_0 starts here, after every all-gather below has ended

// One step: unit 0's all-gather for forward at T - 1 ms, its forward compute until T - 900 µs (backward
// begins there), BC_1 [T, T + 800 µs), BC_0 from kNext; unit 1's own all-gather early in backward; AG_0, the all-gather BC_1 should hide, issued
// at `issued`, running [start, start + dur) on the communication track, behind a reduce-scatter there when
// `rs_end` is set. The one pair: unit 1, AG of unit 0.
struct Layout {
  int64_t issued, start, dur;
  int64_t rs_start = 0, rs_end = 0;
};

model::Rank timeline(const Layout& l) {
  model::Rank r;
  r.rank = 0;
  r.tracks.resize(2);
  const model::StringId bc = r.strings.intern(keys::kUnitBackward), fwd = r.strings.intern(keys::kUnitForward),
                        ag = r.strings.intern("all_gather"), rs = r.strings.intern("reduce_scatter");
  auto compute = [&](model::StringId name, int unit, int64_t ts, int64_t dur) {
    model::Event e;
    e.name = name;
    e.cls = model::IntervalClass::Compute;
    e.unit = unit;
    e.ts_ns = ts;
    e.dur_ns = dur;
    return e;
  };
  auto comm = [&](model::StringId name, model::CollectiveKind kind, int unit, int64_t issued, int64_t ts, int64_t dur) {
    model::Event e;
    e.name = name;
    e.cls = model::IntervalClass::Communication;
    e.coll = kind;
    e.unit = unit;
    e.issued_ns = issued;
    e.ts_ns = ts;
    e.dur_ns = dur;
    return e;
  };
  r.tracks[0].events = {compute(fwd, 0, T - 950 * kUs, 50 * kUs), compute(bc, 1, T, kCompute),
                        compute(bc, 0, kNext, 500 * kUs)};
  std::vector<model::Event>& c = r.tracks[1].events;
  c.push_back(comm(ag, model::CollectiveKind::AllGather, 0, T - 1000 * kUs, T - 1000 * kUs,
                   10 * kUs));  // forward: the step begins here
  c.push_back(comm(ag, model::CollectiveKind::AllGather, 1, T - 870 * kUs, T - 870 * kUs, 10 * kUs));
  if (l.rs_end)
    c.push_back(comm(rs, model::CollectiveKind::ReduceScatter, -1, l.rs_start, l.rs_start, l.rs_end - l.rs_start));
  c.push_back(comm(ag, model::CollectiveKind::AllGather, 0, l.issued, l.start, l.dur));
  std::sort(c.begin(), c.end(), [](const model::Event& a, const model::Event& b) { return a.ts_ns < b.ts_ns; });
  return r;
}

// The one step's cause and its sentence; the step is not effective.
struct Judged {
  metrics::RankPrefetch p;
  const metrics::StepPrefetch& step() const { return p.steps.at(0); }
  std::string sentence() const { return report::step_sentence(step(), p); }
};
Judged judge(const model::Rank& r) {
  Judged j{metrics::check_prefetch(r)};
  EXPECT_EQ(j.p.steps.size(), 1u);
  EXPECT_EQ(j.step().units.size(), 1u);
  EXPECT_EQ(j.step().verdict, Verdict::NotEffective);
  return j;
}

#define EXPECT_SAYS(sentence, text) EXPECT_NE((sentence).find(text), std::string::npos) << (sentence)

TEST(PrefetchCauses, IssuedLate) {
  // AG_0 issued 100 µs after BC_1 began.
  const Judged j = judge(timeline({T + 100 * kUs, T + 100 * kUs, 300 * kUs}));
  EXPECT_EQ(j.step().cause, Cause::IssuedLate);
  EXPECT_EQ(j.step().units[0].issue_lead_ns, -100 * kUs);
  EXPECT_SAYS(j.sentence(),
              "not effective: issued late: 1 of 1 all-gathers were issued only after the backward compute they should "
              "hide had begun "
              "(unit 0's, 100.0 µs after unit 1's backward compute began)");
}

TEST(PrefetchCauses, QueuedBehindAReduceScatter) {
  // Issued 50 µs before BC_1, it waited on its stream behind a reduce-scatter until T + 700 µs: 750 µs
  // queued; then 100 µs of its 300 µs ran under BC_1: 33 % hidden.
  const Judged j = judge(timeline({.issued = T - 50 * kUs,
                                   .start = T + 700 * kUs,
                                   .dur = 300 * kUs,
                                   .rs_start = T - 40 * kUs,
                                   .rs_end = T + 700 * kUs}));
  EXPECT_EQ(j.step().cause, Cause::QueuedBehindReduceScatter);
  EXPECT_EQ(j.step().units[0].queued_ns, 750 * kUs);
  EXPECT_SAYS(j.sentence(),
              "queued behind a reduce-scatter: 1 of 1 all-gathers were issued in time but ran only after a "
              "reduce-scatter on their own "
              "stream (unit 0's waited 750.0 µs); 33% of backward all-gather time hidden");
}

TEST(PrefetchCauses, StartedLate) {
  // Issued 50 µs before BC_1, started only when BC_1 ended, 850 µs after its issue, behind nothing.
  const Judged j = judge(timeline({T - 50 * kUs, T + kCompute, 300 * kUs}));
  EXPECT_EQ(j.step().cause, Cause::StartedLate);
  EXPECT_EQ(j.step().units[0].queued_ns, 850 * kUs);
  EXPECT_SAYS(j.sentence(),
              "started late: 1 of 1 all-gathers were issued in time but started only after the compute they should "
              "hide had ended "
              "(unit 0's started 850.0 µs after its issue, not behind a reduce-scatter); 0% of backward all-gather "
              "time hidden");
}

TEST(PrefetchCauses, AnAllGatherQueuedLongerThanItsStepIsTheHostRunningAhead) {
  // As StartedLate: 850 µs from its launch to its start. In a step whose window is 800 µs the host launched
  // it more than a step ahead of the GPU; in a 5 ms step it is an all-gather that waited.
  const Judged j = judge(timeline({T - 50 * kUs, T + kCompute, 300 * kUs}));
  ASSERT_EQ(j.step().units[0].queued_ns, 850 * kUs);
  report::StepRow short_step, long_step;
  short_step.step = {j.step().step, T, T + 800 * kUs, T, T + 800 * kUs};
  long_step.step = {j.step().step, T, T + 5000 * kUs, T, T + 5000 * kUs};
  const int64_t short_ns = report::step_window_ns({short_step}, j.step().step);
  EXPECT_EQ(short_ns, 800 * kUs);
  EXPECT_SAYS(report::step_sentence(j.step(), j.p, short_ns),
              "[the host runs ahead of the GPU: unit 0's all-gather was queued 850.0 µs from its launch to its start, "
              "longer than the step's 800.0 µs; that is the host being ahead, not the all-gather waiting]");
  for (const std::string& said :
       {report::step_sentence(j.step(), j.p, report::step_window_ns({long_step}, j.step().step)),
        report::step_sentence(j.step(), j.p)})
    EXPECT_EQ(said.find("runs ahead"), std::string::npos) << said;
  // Another step's window is not this one's.
  EXPECT_EQ(report::step_window_ns({short_step}, j.step().step + 1), 0);
}

TEST(PrefetchCauses, NoComputeUnderIt) {
  // Issued and run at T - 500 µs, 300 µs long: done 200 µs before BC_1 (800 µs) began, nothing under it.
  const Judged j = judge(timeline({T - 500 * kUs, T - 500 * kUs, 300 * kUs}));
  EXPECT_EQ(j.step().cause, Cause::NoComputeUnderIt);
  EXPECT_EQ(j.step().units[0].issue_lead_ns, 500 * kUs);
  EXPECT_SAYS(j.sentence(),
              "no compute under it: 1 of 1 all-gathers were issued in time and were shorter than the compute they "
              "should hide, but ran "
              "before it began (unit 0's ran 300.0 µs of its 300.0 µs before unit 1's backward compute started, 500.0 "
              "µs after the issue)");
}

TEST(PrefetchCauses, LongerThanCompute) {
  // Issued and run 5 µs before BC_1, 2 ms long against BC_1's 800 µs: 800 of 2000 µs hidden, 40 %.
  const Judged j = judge(timeline({T - 5 * kUs, T - 5 * kUs, 2000 * kUs}));
  EXPECT_EQ(j.step().cause, Cause::LongerThanCompute);
  EXPECT_EQ(j.step().units[0].hidden_ns, kCompute);
  EXPECT_SAYS(j.sentence(),
              "all-gather longer than the compute it should hide: 1 of 1 all-gathers were issued in time and ran at "
              "once, but outlasted "
              "the backward compute under them (unit 0's: 2.0 ms against 800.0 µs of compute); 40% of backward "
              "all-gather time hidden");
}

TEST(PrefetchCauses, LatePeer) {
  // Two ranks on the same timeline but for AG_0. Rank 0 issues and starts it 5 µs before BC_1 and it runs
  // 2000 µs, against BC_1's 800 µs: 800 of 2000 µs hidden (40 %), 1200 µs of exposed wait, alone a
  // longer-than-compute. Rank 1 joins the same all-gather 1000 µs later (T + 995 µs), and rank 0's kernel
  // cannot finish before it has: rank 1 is the late peer, by 1000 µs, more than half of the 1200 µs wait.
  model::Trace run;
  run.ranks.push_back(timeline({T - 5 * kUs, T - 5 * kUs, 2000 * kUs}));
  run.ranks.push_back(timeline({T + 995 * kUs, T + 995 * kUs, 1000 * kUs}));
  run.ranks[1].rank = 1;
  const metrics::PrefetchCheck check = metrics::check_prefetch(run);
  ASSERT_EQ(check.ranks.size(), 2u);
  const metrics::RankPrefetch& p = check.ranks[0];
  ASSERT_EQ(p.steps.size(), 1u);
  const metrics::StepPrefetch& s = p.steps[0];
  ASSERT_EQ(s.units.size(), 1u);
  EXPECT_EQ(s.verdict, Verdict::NotEffective);
  EXPECT_EQ(s.cause, Cause::LatePeer);
  const metrics::UnitPrefetch& u = s.units[0];
  EXPECT_EQ(u.late_peer, 1);
  EXPECT_EQ(u.late_peer_ns, 1000 * kUs);
  EXPECT_EQ(u.exposed_wait_ns, 1200 * kUs);
  EXPECT_EQ(u.hidden_ns, kCompute);
  EXPECT_SAYS(report::step_sentence(s, p),
              "not effective: a late peer: rank 1 arrived at 1 of 1 all-gathers late (unit 0's: 1.0 ms after this "
              "rank), so they could not finish under the compute; 40% of backward all-gather time hidden");
  // The per-unit row says the same peer and lateness.
  const report::Table t = report::unit_table(s);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][6], "late peer");
  EXPECT_EQ(t.rows[0][7], "rank 1 +1.00 ms");
  // Rank 1 arrived last itself: no peer kept it waiting, its own late issue is its cause.
  EXPECT_EQ(check.ranks[1].steps.at(0).units.at(0).late_peer, -1);
  EXPECT_EQ(check.ranks[1].steps.at(0).cause, Cause::IssuedLate);
}

TEST(PrefetchCauses, Throttled) {
  // As RateLimiter.AnIssueThatWaitedAtTheLimitIsThrottled: a limit of one, all-gathers (300 µs) longer than a
  // unit's backward compute (100 µs); each prefetch issued hook_ns (5 µs) before its compute, 100 of 300 µs
  // hidden per pair: 33 %.
  test::TrainerTraceOptions o;
  o.issue_before_wait = true;
  o.limit_all_gathers = 1;
  o.all_gather_ns = 300'000;
  o.backward_ns = 100'000;
  o.reduce_scatter_ns = 1'000;
  const metrics::RankPrefetch p = test::check_prefetch_of(o);
  ASSERT_EQ(p.steps.size(), 2u);
  const metrics::StepPrefetch& s = p.steps[1];
  EXPECT_EQ(s.cause, Cause::Throttled);
  const metrics::UnitPrefetch* u = s.example();
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->issue_lead_ns, o.hook_ns);
  const std::string said = report::step_sentence(s, p);
  EXPECT_SAYS(said, fmt::format("throttled by the rate limiter (limit_all_gathers = 1): {0} of {0} all-gathers waited "
                                "for an earlier all-gather to "
                                "complete before they could be issued (unit {1}'s: issue lead 5.0 µs); 33% of backward "
                                "all-gather time hidden",
                                o.units - 1, u->next_unit));
}

}  // namespace
