// FSDP's schedule as the trace shows it: when all-gathers are issued relative to backward compute, when
// unsharded parameters are freed; and two features that must not change the math: activation
// checkpointing and resuming from a checkpoint.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "tests/training/ranks.h"
#include "tracer/format/keys.h"
#include "tracer/format/reader.h"

namespace shardscope::test {
namespace {

using trace::Event;

struct Interval {
  int64_t start, end;
};

struct StepView {
  std::map<int, Interval> backward;           // unit -> its backward compute
  std::map<int, int64_t> backward_ag_issued;  // unit -> issue time of its all-gather for backward
};

// Splits rank 0's trace of a full_shard run into steps: each block's backward compute range and the
// all-gather that brought its parameters back for it (the one issued after its forward).
std::vector<StepView> read_steps(const std::filesystem::path& file) {
  auto f = trace::read_trace(file);
  std::vector<Interval> steps;
  std::vector<const Event*> backward, gathers;
  std::map<int, std::vector<Interval>> forward;  // unit -> forward ranges (one a step)
  for (const Event& e : f.events) {
    if (e.ph != 'X') continue;
    if (e.name == keys::kStepRange) steps.push_back({e.ts_ns, e.ts_ns + e.dur_ns});
    if (e.name == keys::kUnitBackward) backward.push_back(&e);
    if (e.name == keys::kUnitForward) forward[e.args[keys::kArgUnit]].push_back({e.ts_ns, e.ts_ns + e.dur_ns});
    if (e.name == keys::kAllGather) gathers.push_back(&e);
  }
  std::vector<StepView> out(steps.size());
  auto step_of = [&](int64_t t) {
    for (size_t s = 0; s < steps.size(); ++s)
      if (t >= steps[s].start && t < steps[s].end) return int(s);
    return -1;
  };
  for (const Event* e : backward) {
    int s = step_of(e->ts_ns);
    if (s >= 0) out[size_t(s)].backward[e->args[keys::kArgUnit]] = {e->ts_ns, e->ts_ns + e->dur_ns};
  }
  for (const Event* e : gathers) {
    int unit = e->args[keys::kArgUnit];
    int64_t issued = e->args[keys::kArgIssuedNs];
    int s = step_of(issued);
    if (s < 0 || unit == 0 || forward[unit].size() <= size_t(s)) continue;
    if (issued > forward[unit][size_t(s)].end) out[size_t(s)].backward_ag_issued[unit] = issued;
  }
  return out;
}

std::vector<StepView> traced_run(const TempDir& dir, const std::string& prefetch) {
  auto ranks = run_ranks(2,
                         {"--preset", "tiny", "--steps", "3", "--batch-size", "1", "--sharding", "full_shard",
                          "--backward-prefetch", prefetch, "--trace-dir", dir.path().string()},
                         dir.path());
  for (auto& r : ranks) EXPECT_EQ(r.rc, 0) << r.stderr_text();
  return read_steps(dir.path() / "trace.rank0.json.gz");
}

TEST(Prefetch, BackwardPreIssuesTheNextAllGatherBeforeTheCurrentBackward) {
  TempDir dir;
  auto steps = traced_run(dir, "pre");
  ASSERT_EQ(steps.size(), 3u);
  for (const StepView& s : steps) {
    ASSERT_EQ(s.backward_ag_issued.size(), 4u);  // every block is re-gathered for backward
    for (int i = 4; i >= 2; --i)
      EXPECT_LT(s.backward_ag_issued.at(i - 1), s.backward.at(i).start) << "unit " << i - 1 << " not prefetched";
  }
}

TEST(Prefetch, NoneIssuesEachAllGatherOnlyWhenItsUnitNeedsIt) {
  TempDir dir;
  auto steps = traced_run(dir, "none");
  ASSERT_EQ(steps.size(), 3u);
  for (const StepView& s : steps) {
    ASSERT_EQ(s.backward_ag_issued.size(), 4u);
    for (int i = 4; i >= 2; --i)
      EXPECT_GE(s.backward_ag_issued.at(i - 1), s.backward.at(i).end) << "unit " << i - 1 << " issued early";
  }
}

TEST(FullShard, UnshardedBytesReturnToZeroAfterEveryUnit) {
  TempDir dir;
  auto ranks = run_ranks(2,
                         {"--preset", "tiny", "--steps", "2", "--batch-size", "1", "--sharding", "full_shard",
                          "--backward-prefetch", "none", "--trace-dir", dir.path().string()},
                         dir.path());
  for (auto& r : ranks) ASSERT_EQ(r.rc, 0) << r.stderr_text();
  auto f = trace::read_trace(dir.path() / "trace.rank1.json.gz");
  // Full (unsharded) fp32 bytes: the root stays gathered through a step; with no prefetch, one block at a time.
  const int64_t root = 4 * (256 * 128 * 2 + 128), block = 4 * (128 * 2 + 4 * 128 * 128 + 3 * 128 * 344);
  std::vector<int64_t> values;
  for (const Event& e : f.events)
    if (e.ph == 'C' && e.name == keys::kMemoryUnshardedParams) values.push_back(e.args["value"]);
  // Per step: root up; then 4 blocks each up and back down to the root alone after forward, and again
  // after backward; then the root down to zero.
  int back_to_root = 0, back_to_zero = 0;
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i] < values[i - 1] && values[i] == root) ++back_to_root;
    if (values[i] < values[i - 1] && values[i] == 0) ++back_to_zero;
    EXPECT_LE(values[i], root + block);
  }
  EXPECT_EQ(back_to_root, 2 * 4 * 2);
  EXPECT_EQ(back_to_zero, 2);
  EXPECT_EQ(values.back(), 0);
}

std::vector<double> losses(const std::filesystem::path& log) {
  std::vector<double> v;
  for (const auto& l : read_log(log)) v.push_back(l["loss"]);
  return v;
}

TEST(ActivationCheckpointing, SameGradientsAsWithout) {
  TempDir a, b;
  std::vector<std::string> args = {"--preset",   "tiny",       "--steps",         "3", "--batch-size", "1",
                                   "--sharding", "full_shard", "--max-grad-norm", "0"};
  auto plain = args, ckpt = args;
  plain.insert(plain.end(), {"--log-json", (a.path() / "log").string(), "--dump-params", (a.path() / "p").string()});
  ckpt.insert(ckpt.end(), {"--activation-checkpointing", "--log-json", (b.path() / "log").string(), "--dump-params",
                           (b.path() / "p").string()});
  for (auto& r : run_ranks(2, plain, a.path())) ASSERT_EQ(r.rc, 0) << r.stderr_text();
  for (auto& r : run_ranks(2, ckpt, b.path())) ASSERT_EQ(r.rc, 0) << r.stderr_text();
  // Identical gradients give identical updates: the losses after the first step and the parameters agree.
  EXPECT_EQ(losses(a.path() / "log"), losses(b.path() / "log"));
  EXPECT_EQ(read_floats(a.path() / "p"), read_floats(b.path() / "p"));
}

TEST(Checkpoint, ResumedRunReproducesTheUninterruptedOne) {
  TempDir a, b;
  std::vector<std::string> args = {"--preset", "tiny", "--steps", "6", "--batch-size", "1", "--sharding", "full_shard"};
  auto straight = args;
  straight.insert(straight.end(), {"--log-json", (a.path() / "log").string()});
  for (auto& r : run_ranks(2, straight, a.path())) ASSERT_EQ(r.rc, 0) << r.stderr_text();

  auto first = args, second = args;
  first.insert(first.end(), {"--stop-after", "3", "--checkpoint-dir", (b.path() / "ckpt").string(), "--log-json",
                             (b.path() / "log").string()});
  second.insert(second.end(), {"--resume", "--checkpoint-dir", (b.path() / "ckpt").string(), "--log-json",
                               (b.path() / "log").string()});
  for (auto& r : run_ranks(2, first, b.path())) ASSERT_EQ(r.rc, 0) << r.stderr_text();
  auto resumed = run_ranks(2, second, b.path());
  for (auto& r : resumed) ASSERT_EQ(r.rc, 0) << r.stderr_text();
  EXPECT_NE(resumed[0].stdout_text().find("resuming at step 3"), std::string::npos) << resumed[0].stdout_text();
  auto want = losses(a.path() / "log"), got = losses(b.path() / "log");
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got, want);  // bit for bit: same shards, same moments, same data
}

}  // namespace
}  // namespace shardscope::test

namespace shardscope::test {
namespace {

TEST(Prefetch, ForwardPrefetchIssuesTheNextUnitBeforeThisOneComputes) {
  TempDir dir;
  auto ranks = run_ranks(2,
                         {"--preset", "tiny", "--steps", "3", "--batch-size", "1", "--sharding", "full_shard",
                          "--forward-prefetch", "--trace-dir", dir.path().string()},
                         dir.path());
  for (auto& r : ranks) ASSERT_EQ(r.rc, 0) << r.stderr_text();
  auto f = trace::read_trace(dir.path() / "trace.rank0.json.gz");
  std::vector<std::pair<int64_t, int>> prefetches;  // (time, unit) of forward prefetch decisions
  std::vector<std::pair<int64_t, int>> forwards;    // (start, unit) of block forward compute
  for (const trace::Event& e : f.events) {
    if (e.ph == 'i' && e.name == keys::kPrefetch && e.args[keys::kArgReason] == "forward_prefetch")
      prefetches.emplace_back(e.ts_ns, e.args[keys::kArgUnit]);
    if (e.ph == 'X' && e.name == keys::kUnitForward && e.args[keys::kArgUnit] != 0)
      forwards.emplace_back(e.ts_ns, e.args[keys::kArgUnit]);
  }
  std::sort(forwards.begin(), forwards.end());
  // The first step records the order; the next two prefetch units 2, 3, 4 each.
  ASSERT_EQ(prefetches.size(), 2u * 3u);
  for (auto [t, unit] : prefetches) {
    // Find the forward of unit - 1 that follows this decision: it must start after it (same step).
    auto it =
        std::find_if(forwards.begin(), forwards.end(), [&](auto& f) { return f.second == unit - 1 && f.first >= t; });
    ASSERT_NE(it, forwards.end()) << "unit " << unit;
    auto next_of_unit =
        std::find_if(forwards.begin(), forwards.end(), [&](auto& f) { return f.second == unit && f.first >= t; });
    ASSERT_NE(next_of_unit, forwards.end());
    EXPECT_LT(it->first, next_of_unit->first)
        << "prefetch of unit " << unit << " came after unit " << unit - 1 << " ran";
  }
}

}  // namespace
}  // namespace shardscope::test
