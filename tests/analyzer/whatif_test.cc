// The replay model (metrics/replay*.h) and what-if (metrics/whatif.h): constructed timelines whose replay is
// worked out by hand below, and the real H100 pairs in tests/data, each run predicted from the other's trace.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "analyzer/analysis/whatif_run.h"
#include "analyzer/metrics/replay.h"
#include "analyzer/metrics/whatif.h"
#include "plugins/load/load.h"
#include "tracer/format/keys.h"

using namespace shardscope;
using metrics::Prefetch;
using metrics::WhatIfChange;

namespace {

constexpr int64_t us = 1000;

// One rank: a host thread that launches, a compute stream, a comm stream and the importers' derived unit
// ranges; one step [step_start, step_end) (on a GPU, the device time from the step's first device op).
struct RankBuilder {
  model::Rank r;
  RankBuilder(int rank, int world, int64_t step_end, int64_t step_start = 0) {
    r.rank = rank, r.world_size = world;
    for (auto [name, kind] : {std::pair{"host", model::TrackKind::HostThread},
                              {"compute", model::TrackKind::DeviceStream},
                              {"comm", model::TrackKind::DeviceStream},
                              {"units", model::TrackKind::HostThread}}) {
      model::Track t;
      t.name = name, t.kind = kind, t.tid = int64_t(r.tracks.size());
      r.tracks.push_back(t);
    }
    r.steps.push_back({0, step_start, step_end, step_start, step_end});
  }
  void launch(int64_t ts) {
    model::Event e;
    e.ts_ns = ts, e.dur_ns = 1 * us, e.name = r.strings.intern("cudaLaunchKernel");
    r.tracks[0].events.push_back(e);
  }
  // A kernel launched at `issued` (a launch is added there).
  void kernel(int track, int64_t issued, int64_t ts, int64_t dur, model::CollectiveKind coll = {}, int unit = -1) {
    launch(issued);
    model::Event e;
    e.ts_ns = ts, e.dur_ns = dur, e.issued_ns = issued, e.step = 0, e.unit = unit, e.coll = coll;
    e.cls = coll == model::CollectiveKind::None ? model::IntervalClass::Compute : model::IntervalClass::Communication;
    e.name = r.strings.intern(coll == model::CollectiveKind::None ? "gemm" : "ncclDevKernel_AllGather_RING_LL");
    r.tracks[size_t(track)].events.push_back(e);
  }
  void unit_backward(int unit, int64_t ts, int64_t dur) {
    model::Event e;
    e.ts_ns = ts, e.dur_ns = dur, e.unit = unit, e.step = 0;
    e.name = r.strings.intern(keys::kUnitBackward), e.cat = r.strings.intern(keys::kCatFsdp);
    r.tracks[3].events.push_back(e);
  }
  model::Rank done() {
    r.finalize();
    return std::move(r);
  }
};

// Three kernels back to back on one stream, launched well ahead: twice as fast compute halves the step.
TEST(WhatIf, ComputeSpeedOnOneStream) {
  RankBuilder b(0, 1, 250 * us, 100 * us);
  b.kernel(1, 0, 100 * us, 50 * us);
  b.kernel(1, 10 * us, 150 * us, 50 * us);
  b.kernel(1, 20 * us, 200 * us, 50 * us);
  model::Trace t;
  t.ranks.push_back(b.done());
  WhatIfChange c;
  c.compute_speed = 2;
  const metrics::WhatIf w = metrics::what_if(t, c);
  ASSERT_EQ(w.steps.size(), 1u);
  EXPECT_EQ(w.steps[0].measured_ns, 150 * us);   // the step's window [100, 250 µs)
  EXPECT_EQ(w.steps[0].unchanged_ns, 150 * us);  // replayed exactly
  // The first kernel keeps its 100 µs after its launch (nothing in the trace explains it), then the three run
  // 25 µs each, back to back (their launches are long past): 100-175 µs, a 75 µs step with no tail.
  EXPECT_EQ(w.predicted_step_ns, 75 * us);
  EXPECT_EQ(w.unchanged_error, 0.0);
}

// An all-gather on two ranks: rank 0 arrives at 10 µs, rank 1 at 60 µs, both end at 110 µs. Its own time is
// 50 µs after the last arrival; twice as fast communication ends it at 60 + 25 = 85 µs on both ranks.
TEST(WhatIf, CollectiveEndsItsOwnTimeAfterTheLastArrival) {
  model::Trace t;
  for (int rank = 0; rank < 2; ++rank) {
    RankBuilder b(rank, 2, 200 * us);
    const int64_t arrive = rank == 0 ? 10 * us : 60 * us;
    b.kernel(2, arrive - 5 * us, arrive, 110 * us - arrive, model::CollectiveKind::AllGather, 1);
    t.ranks.push_back(b.done());
  }
  const metrics::replay::Graph g = metrics::replay::build_graph(t);
  ASSERT_EQ(g.instances.size(), 1u);
  WhatIfChange c;
  c.comm_speed = 2;
  const metrics::replay::Schedule same = metrics::replay::schedule(g, metrics::replay::measured_wiring(g)),
                                  fast = metrics::replay::schedule(g, metrics::changed_wiring(g, c));
  ASSERT_TRUE(same.settled && fast.settled);
  for (size_t o = 0; o < g.ops.size(); ++o) {
    if (g.ops[o].role != metrics::replay::Role::AllGather) continue;
    EXPECT_EQ(g.ops[o].own_ns, 50 * us);
    EXPECT_EQ(same.end[o], 110 * us);
    EXPECT_EQ(fast.end[o], 85 * us);
    EXPECT_EQ(fast.start[o], g.ops[o].ts_ns);  // it still arrives when it did
  }
}

// Backward of two units with no prefetch: unit 1's all-gather (50 µs) waits for unit 2's compute (0-100 µs),
// unit 1's compute (150-250 µs) for it. With BACKWARD_PRE it is issued with unit 2's compute at 0 µs and runs
// 0-50 µs under it; unit 1's compute then follows unit 2's at 100 µs: the step ends at 200 µs, not 250 µs.
model::Trace backward_none() {
  RankBuilder b(0, 1, 250 * us);
  b.kernel(1, 0, 0, 100 * us);                                                  // BC(2)
  b.kernel(2, 1 * us, 100 * us, 50 * us, model::CollectiveKind::AllGather, 1);  // AG(1), after BC(2)
  b.kernel(1, 2 * us, 150 * us, 100 * us);                                      // BC(1)
  b.unit_backward(2, 0, 100 * us);
  b.unit_backward(1, 150 * us, 100 * us);
  model::Trace t;
  t.ranks.push_back(b.done());
  return t;
}

TEST(WhatIf, BackwardPrefetchPreHidesTheAllGather) {
  WhatIfChange c;
  c.backward = Prefetch::Pre;
  const metrics::WhatIf w = metrics::what_if(backward_none(), c);
  EXPECT_EQ(w.measured_backward, "none");
  EXPECT_EQ(w.measured_step_ns, 250 * us);
  EXPECT_EQ(w.steps[0].unchanged_ns, 250 * us);
  EXPECT_EQ(w.predicted_step_ns, 200 * us);
  // Exposed: the all-gather's 50 µs, none of it under compute; with pre all of it is under unit 2's compute.
  EXPECT_EQ(w.measured_exposed_ns, 50 * us);
  EXPECT_EQ(w.predicted_exposed_ns, 0);
  EXPECT_EQ(w.measured_hidden, 0.0);
  EXPECT_EQ(w.predicted_hidden, 1.0);
  ASSERT_EQ(w.units.size(), 1u);
  EXPECT_EQ(w.units[0].unit, 1);
  EXPECT_EQ(w.units[0].measured_ns, 50 * us);
  EXPECT_EQ(w.units[0].predicted_ns, 0);
}

// The same timeline asked for no change, or for "none" again, is the measured one.
TEST(WhatIf, NoChangeIsTheMeasuredRun) {
  for (std::optional<Prefetch> p : {std::optional<Prefetch>{}, std::optional<Prefetch>{Prefetch::None}}) {
    WhatIfChange c;
    c.backward = p;
    const metrics::WhatIf w = metrics::what_if(backward_none(), c);
    EXPECT_EQ(w.predicted_step_ns, 250 * us);
    EXPECT_EQ(w.predicted_exposed_ns, 50 * us);
  }
}

// The trainer on CPU: the host is the device. A compute thread runs the units' backward ranges itself and a
// comm thread the all-gather; nothing is launched. Unit 2's backward (100 µs) from `bc2`; unit 1's all-gather
// (50 µs) on the comm thread from `ag`; unit 1's backward (100 µs) from the later of their ends. One step from 0.
model::Trace cpu_backward(int64_t bc2, int64_t ag) {
  model::Rank r;
  r.rank = 0, r.world_size = 1;
  for (const char* name : {"compute", "comm"}) {
    model::Track t;
    t.name = name, t.kind = model::TrackKind::HostThread, t.tid = int64_t(r.tracks.size());
    r.tracks.push_back(t);
  }
  const int64_t bc1 = std::max(bc2 + 100 * us, ag + 50 * us);
  r.steps.push_back({0, 0, bc1 + 100 * us, 0, bc1 + 100 * us});
  auto range = [&](int track, int64_t ts, int unit, const char* name) {
    model::Event e;
    e.ts_ns = ts, e.dur_ns = track == 0 ? 100 * us : 50 * us, e.unit = unit, e.step = 0;
    e.name = r.strings.intern(name);
    if (track == 1) e.cls = model::IntervalClass::Communication, e.coll = model::CollectiveKind::AllGather;
    r.tracks[size_t(track)].events.push_back(e);
  };
  range(0, bc2, 2, keys::kUnitBackward);
  range(1, ag, 1, "all_gather");
  range(0, bc1, 1, keys::kUnitBackward);
  r.finalize();
  model::Trace t;
  t.ranks.push_back(std::move(r));
  return t;
}

// On CPU the host issues a prefetch as it reaches the compute it should hide behind (pre) or once it has run
// it (post), not whenever the comm thread is free. From the `none` timeline (unit 2 0-100 µs, the all-gather
// 100-150, unit 1 150-250) pre runs the all-gather from unit 2's start, 0-50 µs, and unit 1 follows unit 2:
// 200 µs. From the `pre` timeline (the all-gather 0-50 µs, issued just before unit 2 at 1-101, unit 1 101-201)
// post waits for unit 2's end: the all-gather 101-151, unit 1 151-251, a step from its first op (1 µs) of
// 250 µs; none the same.
TEST(WhatIf, OnCpuThePrefetchIsIssuedWhereTheHostReachesTheCompute) {
  const model::Trace none = cpu_backward(0, 100 * us), pre = cpu_backward(1 * us, 0);
  WhatIfChange to_pre, to_post, to_none;
  to_pre.backward = Prefetch::Pre, to_post.backward = Prefetch::Post, to_none.backward = Prefetch::None;
  const metrics::WhatIf from_none = metrics::what_if(none, to_pre);
  EXPECT_TRUE(from_none.host_is_device);
  EXPECT_EQ(from_none.measured_backward, "none");
  EXPECT_EQ(from_none.measured_step_ns, 250 * us);
  EXPECT_EQ(from_none.steps[0].unchanged_ns, 250 * us);
  EXPECT_EQ(from_none.predicted_step_ns, 200 * us);
  const metrics::WhatIf from_pre = metrics::what_if(pre, to_post);
  EXPECT_EQ(from_pre.measured_backward, "pre");
  EXPECT_EQ(from_pre.measured_step_ns, 201 * us);
  EXPECT_EQ(from_pre.steps[0].unchanged_ns, 201 * us);
  EXPECT_EQ(from_pre.predicted_step_ns, 250 * us);
  EXPECT_EQ(metrics::what_if(pre, to_none).predicted_step_ns, 250 * us);
}

// The host's wait for a reduce-scatter: the trainer's compute thread waits for its comm thread's reduce-scatters
// before the optimizer step and wakes about a millisecond after the last one ends. Unit 1's backward runs
// 0-100 µs, its reduce-scatter 100-200 µs; the optimizer's kernel is launched at 1,200 µs, 1 ms after it.
// Twice as fast communication ends the reduce-scatter at 150 µs, so the launch comes at 1,150 µs and the
// step ends at 1,250 µs, not 1,300 µs: the launch follows the reduce-scatter, not the previous launch.
TEST(WhatIf, ALaunchThatWaitedForAReduceScatterFollowsIt) {
  RankBuilder b(0, 1, 1300 * us);
  b.kernel(1, 0, 0, 100 * us);                                                       // unit 1's backward
  b.kernel(2, 1 * us, 100 * us, 100 * us, model::CollectiveKind::ReduceScatter, 1);  // its reduce-scatter
  b.kernel(1, 1200 * us, 1200 * us, 100 * us);                                       // the optimizer
  b.unit_backward(1, 0, 100 * us);
  model::Trace t;
  t.ranks.push_back(b.done());
  WhatIfChange c;
  c.comm_speed = 2;
  const metrics::WhatIf w = metrics::what_if(t, c);
  EXPECT_EQ(w.measured_step_ns, 1300 * us);
  EXPECT_EQ(w.steps[0].unchanged_ns, 1300 * us);
  EXPECT_EQ(w.predicted_step_ns, 1250 * us);
}

TEST(WhatIf, NothingToReplayIsAnError) {
  model::Trace t;
  t.ranks.push_back(RankBuilder(0, 1, 100).done());
  EXPECT_THROW(metrics::what_if(t, {}), std::invalid_argument);
}

// The real pairs: each run of a pair predicted from the other's trace. Errors on committed traces are
// deterministic; each is held to what docs/whatif.md quotes plus one percentage point.
struct Pair {
  const char *from, *to;
  Prefetch change;
  double quoted;  // |predicted − measured| / measured of `to`, as docs/whatif.md has it
};

model::Trace load(const std::string& dir) {
  return plugins::load({std::filesystem::path(SHARDSCOPE_DATA_DIR) / dir}).trace;
}

// Each run is read once: a pair and its reverse read the same two runs (the H100 trainer runs are 3.8 MB of
// gzip a side, seconds each under ASan).
template <size_t N>
void check_pairs(const Pair (&pairs)[N], double unchanged = 0.001) {
  std::map<std::string, model::Trace> runs;
  for (const Pair& p : pairs)
    for (const char* dir : {p.from, p.to})
      if (!runs.count(dir)) runs.emplace(dir, load(dir));
  for (const Pair& p : pairs) {
    WhatIfChange c;
    c.backward = p.change;
    const metrics::WhatIf from = metrics::what_if(runs.at(p.from), c), to = metrics::what_if(runs.at(p.to), {});
    // The unchanged replay of each run is within `unchanged` of it.
    EXPECT_LE(from.unchanged_error, unchanged) << p.from;
    EXPECT_LE(to.unchanged_error, unchanged) << p.to;
    const double error = std::abs(double(from.predicted_step_ns - to.measured_step_ns)) / double(to.measured_step_ns);
    EXPECT_LE(error, p.quoted + 0.01) << p.from << " -> " << p.to;
    std::printf("%s -> %s: predicted %.1f ms, measured %.1f ms, error %.2f %%\n", p.from, p.to,
                double(from.predicted_step_ns) / 1e6, double(to.measured_step_ns) / 1e6, 100 * error);
  }
}

TEST(WhatIf, RealH100PairsWithinTheirQuotedError) {
  const Pair pairs[] = {
      {"h100_nccl2/pytorch_fsdp1_backward_pre", "h100_nccl2/pytorch_fsdp1_backward_none", Prefetch::None, 0.0161},
      {"h100_nccl2/pytorch_fsdp1_backward_none", "h100_nccl2/pytorch_fsdp1_backward_pre", Prefetch::Pre, 0.0048},
      {"h100_nccl2/shardscope_train_pre", "h100_nccl2/shardscope_train_none", Prefetch::None, 0.0081},
      {"h100_nccl2/shardscope_train_none", "h100_nccl2/shardscope_train_pre", Prefetch::Pre, 0.0537},
  };
  check_pairs(pairs);
}

// The trainer on an H200, recorded quietly (tests/data/h200_trainer_quiet, record.sh beside it: 2 NCCL ranks
// sharing the GPU, two rounds a and b, each backward prefetch pre, none, pre again and --limit-all-gathers 1,
// one run after the other, nothing else running): each run predicted from the other run of its round. `pre`
// runs the default --limit-all-gathers 2, so it is the limit-2 side of the limit pair. Each error is held to
// docs/whatif.md's table plus a point, and within the 5 % goal for quiet runs. `pre` -> `pre_again` changes
// nothing: two runs of one configuration, the noise of this machine.
TEST(WhatIf, H200TrainerQuietPairs) {
  struct QuietPair {
    const char *round, *from, *to;
    std::optional<Prefetch> backward;
    std::optional<int> limit;
    double quoted;  // |predicted − measured| / measured of `to`, as docs/whatif.md has it
  };
  const QuietPair pairs[] = {
      {"a", "pre", "none", Prefetch::None, {}, 0.0096},
      {"a", "none", "pre", Prefetch::Pre, {}, 0.0031},
      {"a", "none", "pre_again", Prefetch::Pre, {}, 0.0038},
      {"a", "limit1", "pre", {}, 2, 0.0430},
      {"a", "pre", "limit1", {}, 1, 0.0454},
      {"a", "pre", "pre_again", {}, {}, 0.0008},
      {"b", "pre", "none", Prefetch::None, {}, 0.0071},
      {"b", "none", "pre", Prefetch::Pre, {}, 0.0106},
      {"b", "limit1", "pre", {}, 2, 0.0144},
      {"b", "pre", "limit1", {}, 1, 0.0190},
  };
  std::map<std::string, model::Trace> runs;
  for (const QuietPair& p : pairs)
    for (const char* run : {p.from, p.to})
      if (const std::string dir = std::string(p.round) + "/" + run; !runs.count(dir))
        runs.emplace(dir, load("h200_trainer_quiet/" + dir));
  for (const QuietPair& p : pairs) {
    WhatIfChange c;
    c.backward = p.backward, c.limit = p.limit;
    const std::string from_dir = std::string(p.round) + "/" + p.from, to_dir = std::string(p.round) + "/" + p.to;
    const metrics::WhatIf from = metrics::what_if(runs.at(from_dir), c), to = metrics::what_if(runs.at(to_dir), {});
    EXPECT_LE(from.unchanged_error, 0.001) << from_dir;
    const double e = std::abs(double(from.predicted_step_ns - to.measured_step_ns)) / double(to.measured_step_ns);
    EXPECT_LE(e, p.quoted + 0.01) << from_dir << " -> " << to_dir;
    EXPECT_LE(e, 0.05) << from_dir << " -> " << to_dir << ": the quiet goal";
    std::printf("%s -> %s: predicted %.1f ms, measured %.1f ms, error %.2f %%\n", from_dir.c_str(), to_dir.c_str(),
                double(from.predicted_step_ns) / 1e6, double(to.measured_step_ns) / 1e6, 100 * e);
  }
}

// The trainer on CPU (tests/golden/trainer_cpu_2ranks: 2 ranks on 2 shared cores): replayed unchanged within
// 1 %, but the pair is not quiet (compute and communication threads share the cores, so the `none` run is the
// faster one) and the replay, which keeps each range's measured length, misses it by about 60 %.
TEST(WhatIf, TrainerCpuPair) {
  const Pair pairs[] = {
      {"../golden/trainer_cpu_2ranks/pre", "../golden/trainer_cpu_2ranks/none", Prefetch::None, 0.6215},
      {"../golden/trainer_cpu_2ranks/none", "../golden/trainer_cpu_2ranks/pre", Prefetch::Pre, 0.5731},
  };
  check_pairs(pairs, 0.008);
}

// The trainer on CPU recorded quietly (tests/data/trainer_cpu_quiet, record.sh beside it: three rounds a, b, c,
// each backward prefetch pre, none, post, pre again, limit 1 and limit 2, 12 steps, load average about 1 from
// the runs themselves): each run of a pair predicted from the other's trace of the same round. Each error is
// held within docs/whatif.md's table plus a point, and each pair's median over the rounds within the 10 %
// goal. `pre` -> `pre_again` is no change at all: the difference between two runs of one configuration,
// which bounds what any prediction of one run from another can reach on this machine.
TEST(WhatIf, TrainerCpuQuietPairs) {
  struct QuietPair {
    const char *from, *to;
    std::optional<Prefetch> backward;
    std::optional<int> limit;
    double error[3];  // rounds a, b, c, as docs/whatif.md quotes them
  };
  const QuietPair pairs[] = {
      {"pre", "none", Prefetch::None, {}, {0.0780, 0.0239, 0.1148}},
      {"none", "pre", Prefetch::Pre, {}, {0.0853, 0.0300, 0.1024}},
      {"pre", "post", Prefetch::Post, {}, {0.0840, 0.0005, 0.0392}},
      {"post", "pre", Prefetch::Pre, {}, {0.0740, 0.0287, 0.0404}},
      {"none", "post", Prefetch::Post, {}, {0.0275, 0.0006, 0.0811}},
      {"post", "none", Prefetch::None, {}, {0.0008, 0.0199, 0.0758}},
      {"limit1", "limit2", {}, 2, {0.0389, 0.0535, 0.1088}},
      {"limit2", "limit1", {}, 1, {0.0471, 0.0406, 0.1289}},
      {"pre", "pre_again", {}, {}, {0.0158, 0.0459, 0.1301}},
  };
  std::map<std::string, model::Trace> runs;
  for (const char* round : {"a", "b", "c"})
    for (const char* run : {"pre", "none", "post", "pre_again", "limit1", "limit2"})
      runs.emplace(std::string(round) + "/" + run, load(std::string("trainer_cpu_quiet/") + round + "/" + run));
  for (const QuietPair& p : pairs) {
    std::vector<double> errors;
    for (int r = 0; r < 3; ++r) {
      const std::string round(1, char('a' + r));
      WhatIfChange c;
      c.backward = p.backward, c.limit = p.limit;
      const metrics::WhatIf from = metrics::what_if(runs.at(round + "/" + p.from), c),
                            to = metrics::what_if(runs.at(round + "/" + p.to), {});
      EXPECT_LE(from.unchanged_error, 0.01) << round << "/" << p.from;
      const double e = std::abs(double(from.predicted_step_ns - to.measured_step_ns)) / double(to.measured_step_ns);
      EXPECT_LE(e, p.error[r] + 0.01) << round << ": " << p.from << " -> " << p.to;
      errors.push_back(e);
    }
    std::sort(errors.begin(), errors.end());
    EXPECT_LE(errors[1], 0.10) << p.from << " -> " << p.to << ": the median over the rounds";
    std::printf("%s -> %s: errors %.2f, %.2f, %.2f %%\n", p.from, p.to, 100 * errors[0], 100 * errors[1],
                100 * errors[2]);
  }
}

// The trainer on CPU with --limit-all-gathers 1 and 2 (tests/data/trainer_cpu_limit: three rounds, each the
// two runs one after the other on the 2-core VM under a load average of 19-21): each run predicted from the
// other's trace. The replay changes nothing on a CPU run (the limit holds back launches, and a CPU run has
// none): the prediction is the unchanged replay, so the error is the difference between the runs, which the
// load, not the limit, makes (one run's steady steps range from 273 ms to 1,268 ms).
TEST(WhatIf, TrainerCpuLimitPairs) {
  struct LimitPair {
    const char* round;
    double one_to_two, two_to_one;  // as docs/whatif.md quotes them
  };
  for (const LimitPair& p : {LimitPair{"a", 1.1627, 0.5327}, {"b", 0.1127, 0.1102}, {"c", 0.0876, 0.0575}}) {
    const std::string dir = std::string("trainer_cpu_limit/") + p.round;
    WhatIfChange to2, to1, none;
    to2.limit = 2, to1.limit = 1;
    const model::Trace one = load(dir + "/limit1"), two = load(dir + "/limit2");
    const metrics::WhatIf from1 = metrics::what_if(one, to2), from2 = metrics::what_if(two, to1);
    EXPECT_LE(from1.unchanged_error, 0.01) << dir;
    EXPECT_LE(from2.unchanged_error, 0.01) << dir;
    // Not modelled on a CPU run: the change predicts what the unchanged replay does.
    EXPECT_EQ(from1.predicted_step_ns, metrics::what_if(one, none).predicted_step_ns) << dir;
    const double e12 = std::abs(double(from1.predicted_step_ns - from2.measured_step_ns)) /
                       double(from2.measured_step_ns),
                 e21 = std::abs(double(from2.predicted_step_ns - from1.measured_step_ns)) /
                       double(from1.measured_step_ns);
    EXPECT_LE(e12, p.one_to_two + 0.01) << dir;
    EXPECT_LE(e21, p.two_to_one + 0.01) << dir;
    std::printf("%s: limit 1 -> 2 error %.2f %%, 2 -> 1 error %.2f %%\n", dir.c_str(), 100 * e12, 100 * e21);
  }
}

// Each rank is reduced to its replay graph as it is read and its events dropped before the next is read: with
// one loading thread never two ranks' events in hand (the graph builder's count, and the loader's progress
// saying which files are being read), and the same figures as the replay of the whole loaded trace.
TEST(WhatIf, ReplaysOneRankInMemoryAtATime) {
  for (const char* dir : {"h100_nccl2/shardscope_train_none", "../golden/trainer_cpu_2ranks/pre"}) {
    std::set<std::string> reading;
    size_t most_reading = 0, files_done = 0, graphs = 0, most_in_hand = 0;
    plugins::LoadOptions options;
    options.threads = 1;
    options.on_progress = [&](const plugins::LoadProgress& p) {  // called one at a time
      if (p.files_done > files_done) reading.erase(p.file), files_done = p.files_done;
      if (!p.reading.empty()) reading.insert(p.reading);
      most_reading = std::max(most_reading, reading.size());
    };
    WhatIfChange c;
    c.backward = Prefetch::Pre;
    const std::string path = std::string(SHARDSCOPE_DATA_DIR) + "/" + dir;
    const analysis::WhatIfRun run = analysis::what_if_stream({path}, options, c, [&](size_t in_hand) {
      ++graphs;
      most_in_hand = std::max(most_in_hand, in_hand);
    });
    EXPECT_EQ(graphs, 2u) << dir;
    EXPECT_EQ(run.ranks, 2u) << dir;
    EXPECT_EQ(most_in_hand, 1u) << dir;
    EXPECT_EQ(most_reading, 1u) << dir;
    const model::Trace trace = load(dir);
    const metrics::WhatIf whole = metrics::what_if(trace, c);
    size_t events = 0;
    for (const model::Rank& r : trace.ranks)
      for (const model::Track& t : r.tracks) events += t.events.size();
    std::printf("%s: %zu events, %zu replay ops of %zu bytes\n", dir, events,
                metrics::replay::build_graph(trace).ops.size(), sizeof(metrics::replay::Op));
    ASSERT_EQ(run.whatif.steps.size(), whole.steps.size()) << dir;
    for (size_t s = 0; s < whole.steps.size(); ++s) {
      EXPECT_EQ(run.whatif.steps[s].measured_ns, whole.steps[s].measured_ns) << dir << " step " << s;
      EXPECT_EQ(run.whatif.steps[s].unchanged_ns, whole.steps[s].unchanged_ns) << dir << " step " << s;
      EXPECT_EQ(run.whatif.steps[s].predicted_ns, whole.steps[s].predicted_ns) << dir << " step " << s;
    }
    EXPECT_EQ(run.whatif.predicted_exposed_ns, whole.predicted_exposed_ns) << dir;
    EXPECT_EQ(run.whatif.backward_all_gathers, whole.backward_all_gathers) << dir;
  }
}

// The ranks' graphs are joined by rank number whatever order they come in: rank 1's trace first gives the
// same collective instances and the same schedule, rank 0's ops first.
TEST(WhatIf, JoinOrdersRanksByNumber) {
  model::Trace t;
  for (int rank : {1, 0}) {
    RankBuilder b(rank, 2, 200 * us);
    const int64_t arrive = rank == 0 ? 10 * us : 60 * us;
    b.kernel(2, arrive - 5 * us, arrive, 110 * us - arrive, model::CollectiveKind::AllGather, 1);
    t.ranks.push_back(b.done());
  }
  const metrics::replay::Graph g = metrics::replay::build_graph(t);
  ASSERT_EQ(g.ranks.size(), 2u);
  EXPECT_EQ(g.ranks[0].rank, 0);
  EXPECT_EQ(g.ranks[1].rank, 1);
  ASSERT_EQ(g.instances.size(), 1u);
  ASSERT_EQ(g.instances[0].size(), 2u);
  // Rank 0 arrived at 10 µs, rank 1 at 60 µs: each op's own time is the 50 µs after the last arrival.
  const metrics::replay::Op &first = g.ops[size_t(g.instances[0][0])], &second = g.ops[size_t(g.instances[0][1])];
  EXPECT_EQ(first.rank, 0);
  EXPECT_EQ(first.ts_ns, 10 * us);
  EXPECT_EQ(second.rank, 1);
  EXPECT_EQ(second.ts_ns, 60 * us);
  EXPECT_EQ(first.own_ns, 50 * us);
  EXPECT_EQ(second.own_ns, 50 * us);
  // Launches point into their own rank's ops after the join.
  EXPECT_EQ(g.ops[size_t(first.launch)].rank, 0);
  EXPECT_EQ(g.ops[size_t(second.launch)].rank, 1);
}

// That is why a CPU run is marked (and check-prefetch gives no saving for one), and a GPU run is not.
TEST(WhatIf, ACpuRunIsMarkedAndAGpuRunIsNot) {
  EXPECT_TRUE(metrics::what_if(load("../golden/trainer_cpu_2ranks/none"), {}).host_is_device);
  EXPECT_FALSE(metrics::what_if(load("h100_nccl2/shardscope_train_none"), {}).host_is_device);
}

}  // namespace

namespace {

// The command: its JSON (through -o) is the analysis's figures; what cannot be replayed is one error line.
struct Ran {
  int rc;
  std::string err;
};
Ran run(const std::string& args) {
  const std::string err = (std::filesystem::temp_directory_path() / "shardscope_whatif_test.err").string();
  const int rc = std::system((std::string(SHARDSCOPE_BIN) + " whatif " + args + " -q 2>" + err).c_str());
  std::ifstream in(err);
  return {WEXITSTATUS(rc), std::string(std::istreambuf_iterator<char>(in), {})};
}

TEST(WhatIfCli, JsonThroughOutputFile) {
  const std::string dir = std::string(SHARDSCOPE_DATA_DIR) + "/h100_nccl2/pytorch_fsdp1_backward_none";
  const std::string out = (std::filesystem::temp_directory_path() / "shardscope_whatif_test.json").string();
  ASSERT_EQ(run(dir + " --backward-prefetch pre --format json -o " + out).rc, 0);
  std::ifstream in(out);
  const nlohmann::json j = nlohmann::json::parse(in);
  WhatIfChange c;
  c.backward = Prefetch::Pre;
  const metrics::WhatIf w = metrics::what_if(load("h100_nccl2/pytorch_fsdp1_backward_none"), c);
  EXPECT_EQ(j["predicted_step_ns"].get<int64_t>(), w.predicted_step_ns);
  EXPECT_EQ(j["measured_step_ns"].get<int64_t>(), w.measured_step_ns);
  EXPECT_EQ(j["change"], "backward prefetch pre");
  EXPECT_EQ(j["steps"].size(), 3u);
}

TEST(WhatIfCli, NothingToReplayIsOneErrorLine) {
  const Ran r = run(std::string(SHARDSCOPE_DATA_DIR) + "/torch113_ddp_gloo");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("shardscope: error: no steady step with device work to replay"), std::string::npos) << r.err;
  // Rank summaries keep no events: named, and refused.
  const std::string sums = (std::filesystem::temp_directory_path() / "shardscope_whatif_test_sums").string();
  std::filesystem::remove_all(sums);
  ASSERT_EQ(std::system((std::string(SHARDSCOPE_BIN) + " summarize -q " + SHARDSCOPE_DATA_DIR +
                         "/../golden/trainer_cpu_2ranks/none -o " + sums + " >/dev/null")
                            .c_str()),
            0);
  const Ran summary = run(sums);
  EXPECT_EQ(summary.rc, 2);
  EXPECT_NE(summary.err.find("a rank summary holds no events to replay"), std::string::npos) << summary.err;
  const Ran missing = run("/nonexistent/run");
  EXPECT_EQ(missing.rc, 2);
  EXPECT_NE(missing.err.find("/nonexistent/run"), std::string::npos) << missing.err;
}

}  // namespace
