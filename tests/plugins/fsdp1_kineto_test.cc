// PyTorch FSDP1 traces give the prefetch check its units although FSDP1's labels name no module: units are
// inferred from the order of its hooks (plugins/common/fsdp1_labels.cc), and the trace says so.
#include <gtest/gtest.h>

#include <fstream>

#include "analyzer/metrics/prefetch.h"
#include "plugins/kineto/kineto_keys.h"
#include "plugins/load/load.h"
#include "tests/plugins/fsdp1_trace.h"
#include "tests/support/temp_dir.h"

using namespace shardscope;

namespace {

model::Rank load_fsdp1(const test::Fsdp1TraceOptions& o) {
  test::TempDir d;
  std::ofstream(d.path() / "fsdp1.json") << test::Fsdp1Trace().build(o);
  plugins::LoadResult r = plugins::load({d.path() / "fsdp1.json"});
  return std::move(r.trace.ranks.at(0));
}

// The units each backward all-gather was tagged with, in launch order.
std::vector<int> backward_gather_units(const model::Rank& rank) {
  std::vector<std::pair<int64_t, int>> v;
  for (const model::Track& t : rank.tracks)
    for (const model::Event& e : t.events)
      if (e.coll == model::CollectiveKind::AllGather && e.issued_ns >= 1'000'000) v.push_back({e.issued_ns, e.unit});
  std::sort(v.begin(), v.end());
  std::vector<int> units;
  for (auto [ts, u] : v) units.push_back(u);
  return units;
}

TEST(Fsdp1Labels, UnitsAreInferredFromHookOrderAndSaidToBe) {
  model::Rank rank = load_fsdp1({});
  EXPECT_EQ(rank.metadata[kineto_keys::kFsdpUnits].get<std::vector<std::string>>(),
            (std::vector<std::string>{"unit 0 (root, by order)", "unit 1 (by order)", "unit 2 (by order)",
                                      "unit 3 (by order)"}));
  // The same names, typed on the rank's shape (what the viewer's unit rows read), numbered from the root.
  ASSERT_EQ(rank.shape.units.size(), 4u);
  EXPECT_EQ(rank.shape.unit_name(2), "unit 2 (by order)");
  EXPECT_FALSE(rank.shape.given);  // a PyTorch trace has no run_config
  // The root's hook prefetches block 3, block 3's block 2, block 2's block 1: reverse post-forward order.
  EXPECT_EQ(backward_gather_units(rank), (std::vector<int>{3, 2, 1}));
  metrics::RankPrefetch p = metrics::check_prefetch(rank);
  EXPECT_EQ(p.unit_identity, model::UnitIdentity::InferredFromOrder);
}

TEST(Fsdp1Labels, BackwardPrefetchIsFoundEffective) {
  metrics::RankPrefetch p = metrics::check_prefetch(load_fsdp1({}));
  ASSERT_EQ(p.steps.size(), 1u);
  const metrics::StepPrefetch& s = p.steps[0];
  EXPECT_EQ(s.verdict, metrics::Verdict::Effective) << int(s.cause);
  ASSERT_EQ(s.units.size(), 2u);  // pairs (3 -> 2), (2 -> 1); the root is never re-gathered
  EXPECT_EQ(s.units[0].unit, 3);
  EXPECT_EQ(s.units[0].next_unit, 2);
  EXPECT_EQ(s.units[1].unit, 2);
  EXPECT_EQ(s.units[1].next_unit, 1);
  for (const auto& u : s.units) {
    EXPECT_GT(u.issue_lead_ns, 0);
    EXPECT_GT(u.hidden_share(), 0.5);
    EXPECT_FALSE(u.throttled);
  }
}

TEST(Fsdp1Labels, WithoutPrefetchTheAllGathersAreIssuedLate) {
  model::Rank rank = load_fsdp1({.prefetch = false});
  EXPECT_EQ(backward_gather_units(rank), (std::vector<int>{3, 2, 1}));  // each in its own hook
  metrics::RankPrefetch p = metrics::check_prefetch(rank);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].verdict, metrics::Verdict::NotEffective);
  EXPECT_EQ(p.steps[0].cause, metrics::Cause::IssuedLate);
}

TEST(Fsdp1Labels, TheRateLimiterRangeMarksAThrottledAllGather) {
  // 600 µs backward all-gathers outlast the 400 µs between hooks: in block 3's hook the limiter waits for
  // block 3's own all-gather (prefetched in the root's hook) before issuing block 2's.
  metrics::RankPrefetch p = metrics::check_prefetch(load_fsdp1({.limited_unit = 3, .backward_all_gather_us = 600}));
  ASSERT_EQ(p.steps.size(), 1u);
  ASSERT_EQ(p.steps[0].units.size(), 2u);
  EXPECT_TRUE(p.steps[0].units[0].throttled);   // block 2's all-gather, held back in block 3's hook
  EXPECT_FALSE(p.steps[0].units[1].throttled);  // block 1's, issued at once
}

}  // namespace
