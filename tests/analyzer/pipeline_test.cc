// The one pipeline (analysis/run.h) and the model's side tables (model/index.h), on the small traces kept
// with the golden tests, so they run in a plain clone.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "analyzer/analysis/diff.h"
#include "analyzer/analysis/run.h"
#include "model/index.h"
#include "tests/analyzer/trainer_trace.h"
#include "tests/support/temp_dir.h"

namespace shardscope {
namespace {

namespace fs = std::filesystem;

const fs::path kGolden = fs::path(SHARDSCOPE_SOURCE_DIR) / "tests" / "golden";
const std::string kRank0 = (kGolden / "kineto_two_ranks" / "sampled_rank-0.json.gz").string();
const std::string kRank1 = (kGolden / "kineto_two_ranks" / "sampled_rank-1.json.gz").string();

// A step the trace marks aborted stays in the step table, marked, and out of the all-steps totals and the
// prefetch verdict (a cut-off step would skew both).
TEST(Pipeline, AnAbortedStepIsShownAndLeftOutOfTotalsAndVerdict) {
  test::TempDir dir;
  test::TrainerTraceOptions o;
  o.world = 1;
  o.steps = 4;
  o.aborted_steps = {2};
  const fs::path path = dir.path() / "trace.rank0.json";
  test::write_trainer_trace(path, o);
  analysis::AnalysedRun run = analysis::analyse_run({path.string()}, {});
  ASSERT_EQ(run.report.ranks.size(), 1u);
  const report::RankReport& r = run.report.ranks[0];
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(r.aborted_steps, std::vector<int64_t>{2});
  int64_t completed = 0;
  for (const report::StepRow& s : r.steps) {
    EXPECT_EQ(s.step.aborted, s.step.number == 2);
    if (!s.step.aborted) completed += s.m.window_ns;
  }
  EXPECT_GT(completed, 0);
  EXPECT_EQ(r.all_steps.window_ns, completed);
  ASSERT_EQ(r.prefetch.steps.size(), 4u);
  EXPECT_TRUE(r.prefetch.steps[2].aborted);
  // Step 0 is warm-up and step 2 aborted: steps 1 and 3 decide.
  EXPECT_EQ(r.prefetch.steady_effective + r.prefetch.steady_not_effective, 2u);
}

TEST(Pipeline, ReportsProgressForEveryFile) {
  std::mutex mu;
  std::vector<plugins::LoadProgress> seen;
  plugins::LoadOptions opts;
  opts.on_progress = [&](const plugins::LoadProgress& p) {
    std::lock_guard lock(mu);
    seen.push_back(p);
  };
  analysis::AnalysedRun run = analysis::analyse_run({kRank0, kRank1}, opts);
  ASSERT_EQ(run.trace.ranks.size(), 2u);
  // Once before the first file, when each file starts and while it is parsed (`reading` names it), and once
  // after each file (`file` names it, `reading` empty).
  ASSERT_GE(seen.size(), 3u);
  EXPECT_EQ(seen.front().files_done, 0u);
  EXPECT_TRUE(seen.front().reading.empty() && seen.front().file.empty());
  std::vector<std::string> finished;
  size_t done = 0;
  for (const plugins::LoadProgress& p : seen) {
    EXPECT_GE(p.files_done, done);  // never goes back
    if (p.files_done > done) {
      finished.push_back(p.file);
      EXPECT_TRUE(p.reading.empty()) << p.reading;
    }
    if (!p.reading.empty()) {
      EXPECT_TRUE(p.reading == kRank0 || p.reading == kRank1) << p.reading;
    }
    done = p.files_done;
  }
  ASSERT_EQ(finished.size(), 2u);
  std::sort(finished.begin(), finished.end());
  EXPECT_EQ(finished, (std::vector<std::string>{std::min(kRank0, kRank1), std::max(kRank0, kRank1)}));
  EXPECT_EQ(seen.back().files_done, 2u);
  EXPECT_EQ(seen.back().files, 2u);
  EXPECT_EQ(seen.back().bytes_done, seen.back().bytes);
  EXPECT_GT(seen.back().bytes, 200'000u);
  EXPECT_EQ(run.report.ranks.size(), 2u);
  EXPECT_EQ(run.prefetch.ranks.size(), 2u);
}

TEST(Pipeline, AFileThatFailsIsReportedAndTheRestStillLoad) {
  test::TempDir dir;
  // Named on the command line, a file no importer reads is an error (found in a directory it is passed over).
  const fs::path bad = dir.path() / "broken.json";
  std::ofstream(bad) << "step 1 loss 2.5\nstep 2 loss 2.4\n";
  plugins::LoadOptions opts;
  opts.keep_going = true;
  analysis::AnalysedRun run = analysis::analyse_run({kRank0, bad.string()}, opts);
  ASSERT_EQ(run.failures.size(), 1u);
  EXPECT_EQ(run.failures[0].path, bad.string());
  EXPECT_NE(run.failures[0].message.find("broken.json"), std::string::npos) << run.failures[0].message;
  ASSERT_EQ(run.trace.ranks.size(), 1u);
  EXPECT_EQ(run.report.ranks.size(), 1u);

  // Without keep_going the same load stops at the bad file, naming it.
  try {
    analysis::analyse_run({kRank0, bad.string()}, {});
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("broken.json"), std::string::npos) << e.what();
  }
}

TEST(Pipeline, PrefetchOnlyScopeGivesTheSameVerdictAsTheReport) {
  analysis::AnalysedRun all = analysis::analyse_run({kRank0, kRank1}, {});
  analysis::AnalysedRun only = analysis::analyse_run({kRank0, kRank1}, {}, analysis::Scope::PrefetchOnly);
  EXPECT_EQ(all.prefetch.verdict, only.prefetch.verdict);
  ASSERT_EQ(all.prefetch.ranks.size(), only.prefetch.ranks.size());
  for (size_t i = 0; i < all.prefetch.ranks.size(); ++i)
    EXPECT_EQ(all.prefetch.ranks[i].steps.size(), only.prefetch.ranks[i].steps.size());
  // Nothing else was computed: each rank carries its header, its prefetch check and its steps' windows (an
  // all-gather's queue is compared with its step), no per-step metrics.
  ASSERT_EQ(only.report.ranks.size(), all.report.ranks.size());
  for (size_t i = 0; i < only.report.ranks.size(); ++i) {
    const report::RankReport& r = only.report.ranks[i];
    EXPECT_TRUE(r.collectives.empty() && r.top_device.empty() && !r.whole) << r.source;
    ASSERT_EQ(r.steps.size(), all.report.ranks[i].steps.size()) << r.source;
    for (size_t s = 0; s < r.steps.size(); ++s) {
      EXPECT_EQ(r.steps[s].step.end_ns, all.report.ranks[i].steps[s].step.end_ns);
      EXPECT_EQ(r.steps[s].m.window_ns, 0) << r.source;
    }
  }
  EXPECT_TRUE(only.report.stragglers.instances.empty());
  EXPECT_FALSE(all.report.stragglers.instances.empty());
}

TEST(Pipeline, DiffPairsRanksAndRanksChangesLargestFirst) {
  analysis::AnalysedRun a = analysis::analyse_run({kRank0}, {}), b = analysis::analyse_run({kRank1}, {});
  analysis::RunDiff d = analysis::diff_runs(a, b);
  ASSERT_EQ(d.ranks.size(), 1u);
  const analysis::RankDiff& r = d.ranks[0];
  EXPECT_EQ(r.rank_a, 0);
  EXPECT_EQ(r.rank_b, 1);
  ASSERT_FALSE(r.largest_changes.empty());
  EXPECT_LE(r.largest_changes.size(), analysis::kLargestChanges);
  for (size_t i = 1; i < r.largest_changes.size(); ++i)
    EXPECT_GE(std::llabs(r.largest_changes[i - 1].b_ns - r.largest_changes[i - 1].a_ns),
              std::llabs(r.largest_changes[i].b_ns - r.largest_changes[i].a_ns));
  const auto steps =
      std::find_if(r.rows.begin(), r.rows.end(), [](const analysis::DiffRow& row) { return row.metric == "steps"; });
  ASSERT_NE(steps, r.rows.end());
  EXPECT_EQ(steps->a, steps->b);  // both ranks profiled the same two steps
}

model::Event range(int64_t ts, int64_t dur, model::IntervalClass cls = model::IntervalClass::Host) {
  model::Event e;
  e.ts_ns = ts, e.dur_ns = dur, e.cls = cls;
  return e;
}

TEST(ModelIndex, NestingDepthAndLaunchLinks) {
  model::Rank r;
  model::Track host{1, 1, "thread", model::TrackKind::HostThread, {}};
  host.events = {range(0, 100), range(10, 50), range(20, 10), range(60, 5), range(200, 10)};
  model::Track stream{1, 7, "stream 7", model::TrackKind::DeviceStream, {}};
  model::Event k = range(30, 40, model::IntervalClass::Compute);
  k.issued_ns = 20;  // launched by the innermost range starting at 20
  model::Event orphan = range(80, 5, model::IntervalClass::Compute);
  orphan.issued_ns = 77;  // no host event starts there
  stream.events = {k, orphan};
  r.tracks = {host, stream};
  model::RankIndex ix = model::index_rank(r);
  ASSERT_EQ(ix.depth.size(), 2u);
  EXPECT_EQ(ix.depth[0], (std::vector<uint16_t>{0, 1, 2, 1, 0}));
  EXPECT_EQ(ix.max_depth, 2);
  ASSERT_EQ(ix.launches.size(), 1u);
  const model::LaunchLink* l = ix.launch_of({1, 0});
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->launch, (model::EventRef{0, 2}));
  EXPECT_EQ(ix.launch_of({1, 1}), nullptr);
}

TEST(ModelIndex, EveryKernelOfAKinetoTraceFindsItsLaunch) {
  analysis::AnalysedRun run = analysis::analyse_run({kRank0}, {}, analysis::Scope::PrefetchOnly);
  const model::Rank& r = run.trace.ranks[0];
  model::RankIndex ix = model::index_rank(r);
  size_t device_with_issue = 0;
  for (const model::Track& t : r.tracks)
    for (const model::Event& e : t.events) device_with_issue += e.is_device() && e.issued_ns != model::kUnknown;
  ASSERT_GT(device_with_issue, 100u);
  EXPECT_EQ(ix.launches.size(), device_with_issue);
  for (const model::LaunchLink& l : ix.launches) {
    const model::Event& launch = r.tracks[l.launch.track].events[l.launch.index];
    const model::Event& dev = r.tracks[l.device.track].events[l.device.index];
    EXPECT_FALSE(launch.is_device());
    EXPECT_EQ(launch.ts_ns, dev.issued_ns);
  }
}

}  // namespace
}  // namespace shardscope
