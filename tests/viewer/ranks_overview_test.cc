// The Ranks overview's model: a run opened from its summaries (made here with `shardscope summarize`) gives
// the rows its traces give, without loading an event; 256 generated ranks put the straggler and the slowest
// rank first; a rank's trace is found where its summary says, or beside it, or named as missing.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "analyzer/analysis/run.h"
#include "viewer/model/ranks_overview.h"

namespace shardscope::viewer {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = SHARDSCOPE_SOURCE_DIR;

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / fmt::format("shardscope-overview-{}-{}", name, ::getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void summarize(const fs::path& run, const fs::path& out) {
  const std::string cmd =
      fmt::format("'{}' summarize '{}' -o '{}' >/dev/null", SHARDSCOPE_BIN, run.string(), out.string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

const RankOverviewRow& row_of_rank(const RanksOverview& o, int rank) {
  for (const RankOverviewRow& r : o.rows)
    if (r.rank == rank) return r;
  throw std::runtime_error(fmt::format("no row for rank {}", rank));
}

// Every golden run, opened from its summaries alone, has the rows that loading its traces gives.
TEST(ViewerRanksOverview, GoldenRunsFromSummariesEqualTheirTraces) {
  for (const char* run :
       {"trainer_cpu_2ranks/pre", "trainer_cpu_2ranks/none", "kineto_two_ranks", "kineto_seq_pairing", "gpu_demo"}) {
    SCOPED_TRACE(run);
    const fs::path traces = kSource / "tests/golden" / run;
    const fs::path dir = fresh_dir("golden");
    summarize(traces, dir);
    const std::optional<SummaryInputs> in = find_summaries({dir});
    ASSERT_TRUE(in);
    EXPECT_TRUE(in->unsummarised.empty());
    const RanksOverview from_summaries = open_overview(*in, {});
    EXPECT_EQ(from_summaries.events_loaded, 0u);

    std::vector<std::string> paths;
    for (const fs::path& f : plugins::expand_inputs({traces})) paths.push_back(f.string());
    const RanksOverview from_traces = overview_of(analysis::analyse_run(paths, {}));
    EXPECT_GT(from_traces.events_loaded, 0u);
    ASSERT_EQ(from_summaries.rows.size(), from_traces.rows.size());
    ASSERT_EQ(from_summaries.rows.size(), in->summaries.size());
    EXPECT_EQ(from_summaries.straggler, from_traces.straggler);
    EXPECT_EQ(from_summaries.instances, from_traces.instances);
    EXPECT_EQ(from_summaries.prefetch, from_traces.prefetch);
    for (size_t i = 0; i < from_traces.rows.size(); ++i) {
      const RankOverviewRow &a = from_summaries.rows[i], &b = from_traces.rows[i];
      EXPECT_EQ(a.rank, b.rank);
      EXPECT_EQ(a.steady_steps, b.steady_steps);
      EXPECT_EQ(a.step_ns, b.step_ns);
      EXPECT_EQ(a.compute_ns, b.compute_ns);
      EXPECT_EQ(a.comm_ns, b.comm_ns);
      EXPECT_EQ(a.exposed_ns, b.exposed_ns);
      EXPECT_EQ(a.times_last, b.times_last);
      EXPECT_EQ(a.prefetch, b.prefetch);
      EXPECT_EQ(a.prefetch_checked, b.prefetch_checked);
      // Each row knows its summary, and its trace is the one summarised (recorded as given: absolute here).
      EXPECT_EQ(fs::path(a.summary).parent_path(), dir);
      const TraceLookup t = trace_of(a);
      ASSERT_TRUE(t.path) << t.note;
      EXPECT_TRUE(fs::equivalent(*t.path, b.source)) << *t.path << " vs " << b.source;
    }
    fs::remove_all(dir);
  }
}

// The trainer run's numbers, by hand: 3 steps, so 2 steady; rank 0 arrives last at the most all-gathers
// (docs/report.md's report of the same run: "rank 0 arrived last at 30 of 42 collective instances").
TEST(ViewerRanksOverview, TrainerRunHasStepsStragglerAndPrefetch) {
  const fs::path dir = fresh_dir("trainer");
  summarize(kSource / "tests/golden/trainer_cpu_2ranks/pre", dir);
  const RanksOverview o = open_overview(*find_summaries({dir}), {});
  ASSERT_EQ(o.rows.size(), 2u);
  for (const RankOverviewRow& r : o.rows) {
    EXPECT_EQ(r.steps, 3u);
    EXPECT_EQ(r.steady_steps, 2u);
    ASSERT_TRUE(r.step_ns && r.compute_ns && r.comm_ns && r.exposed_ns);
    EXPECT_GT(*r.step_ns, *r.compute_ns);
    EXPECT_LE(*r.exposed_ns, *r.comm_ns);
    EXPECT_TRUE(r.prefetch_checked);
  }
  EXPECT_GT(o.instances, 0u);
  ASSERT_GE(o.straggler, 0);
  EXPECT_EQ(o.rows.front().rank, o.straggler);  // the straggler first
  EXPECT_GT(o.rows.front().times_last, o.rows.back().times_last);
  fs::remove_all(dir);
}

// A small PyTorch-profiler rank: 4 steps, each with a compute kernel and an all-gather of process group "0"
// (sequence number = step). Rank `slow` has longer steps and more compute; rank `late` starts every all-gather 200 µs after
// the others (who start within 256 ns of each other, each at its own offset).
void write_rank(const fs::path& file, int rank, int world, int slow, int late) {
  std::ofstream out(file);
  out << fmt::format(R"J({{"distributedInfo": {{"rank": {}, "world_size": {}}}, "traceEvents": [)J", rank, world)
      << "\n";
  const int64_t offset_ns = (int64_t(rank) * 7919) % 256;  // a permutation of 0..255 over the ranks
  for (int s = 0; s < 4; ++s) {
    // Steps tile (each runs to the next one's start): the slow rank's steady steps 1 and 2 take 2.3 ms, the
    // others' 2 ms, while every rank's all-gathers keep the same times.
    const double base = 1000.0 + s * 2000.0;
    const double t = base + (rank == slow ? (s == 1 ? -300 : s == 3 ? 300 : 0) : 0);
    const double step = rank == slow ? 1500 : 1000, compute = rank == slow ? 900 : 400;
    const double ag = base + 600 + (rank == late ? 200 : 0) + double(offset_ns) / 1000.0;
    const int c1 = 2 * s + 1, c2 = 2 * s + 2, ext = 100 + s;
    out << fmt::format(
               R"J({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", "pid": 1, "tid": 1, "ts": {:.3f}, "dur": {}}},)J",
               s, t, step)
        << "\n";
    out << fmt::format(
               R"J({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {:.3f}, "dur": 5, "args": {{"correlation": {}}}}},)J",
               t + 10, c1)
        << "\n";
    out << fmt::format(
               R"J({{"ph": "X", "cat": "kernel", "name": "sm90_gemm_bf16", "pid": 0, "tid": 7, "ts": {:.3f}, "dur": {}, "args": {{"stream": 7, "correlation": {}}}}},)J",
               t + 50, compute, c1)
        << "\n";
    out << fmt::format(
               R"J({{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": {:.3f}, "dur": 5, "args": {{"External id": {}, "Seq": {}, "Process Group Name": "0", "Collective name": "_allgather_base", "Out msg nelems": 1000, "Group size": {}, "dtype": "Float"}}}},)J",
               base + 590, ext, s, world)
        << "\n";
    out << fmt::format(
               R"J({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {:.3f}, "dur": 5, "args": {{"correlation": {}, "External id": {}}}}}{})J",
               base + 595, c2, ext, ",")
        << "\n";
    out << fmt::format(
               R"J({{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(x)", "pid": 0, "tid": 20, "ts": {:.3f}, "dur": 100, "args": {{"stream": 20, "correlation": {}, "External id": {}}}}}{})J",
               ag, c2, ext, s == 3 ? "" : ",")
        << "\n";
  }
  out << "]}\n";
}

class ViewerOverviewManyRanks : public ::testing::Test {
 protected:
  static constexpr int kWorld = 256, kSlow = 37, kLate = 200;
  void SetUp() override {
    dir_ = fresh_dir("many");
    for (int r = 0; r < kWorld; ++r) write_rank(dir_ / fmt::format("rank{}.json", r), r, kWorld, kSlow, kLate);
    summarize(dir_, dir_);  // the summaries beside their traces
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ViewerOverviewManyRanks, OpensFromSummariesWithTheStragglerAndTheSlowestFirst) {
  const std::optional<SummaryInputs> in = find_summaries({dir_});
  ASSERT_TRUE(in);
  EXPECT_EQ(in->summaries.size(), size_t(kWorld));
  EXPECT_EQ(in->paired, size_t(kWorld));  // each trace beside its summary: not read
  EXPECT_TRUE(in->unsummarised.empty());
  const RanksOverview o = open_overview(*in, {});
  ASSERT_TRUE(o.failures.empty());
  EXPECT_EQ(o.events_loaded, 0u);
  ASSERT_EQ(o.rows.size(), size_t(kWorld));
  EXPECT_EQ(o.instances, 4u);
  EXPECT_EQ(o.straggler, kLate);
  // The default order: the rank last at every all-gather, then the slowest step, then by rank.
  EXPECT_EQ(o.rows[0].rank, kLate);
  EXPECT_EQ(o.rows[0].times_last, 4u);
  EXPECT_GE(o.rows[0].max_late_ns, 199'000);
  EXPECT_EQ(o.rows[1].rank, kSlow);
  EXPECT_EQ(o.rows[1].times_last, 0u);
  EXPECT_EQ(o.rows[2].rank, 0);
  const RankOverviewRow& slow = row_of_rank(o, kSlow);
  const RankOverviewRow& other = row_of_rank(o, 1);
  EXPECT_EQ(slow.steps, 4u);
  EXPECT_EQ(slow.steady_steps, 3u);
  ASSERT_TRUE(slow.step_ns && other.step_ns && slow.compute_ns && other.compute_ns);
  EXPECT_EQ(*slow.step_ns, 2'300'000);
  EXPECT_EQ(*other.step_ns, 2'000'000);
  EXPECT_EQ(*slow.compute_ns, 900'000);
  EXPECT_EQ(*other.compute_ns, 400'000);
  EXPECT_EQ(other.comm_ns, 100'000);
  // Every row's summary is its own file, and its trace the one beside it.
  for (const RankOverviewRow& r : o.rows)
    EXPECT_EQ(fs::path(r.summary).filename(), fmt::format("rank{}.sqlite", r.rank));

  std::vector<RankOverviewRow> rows = o.rows;
  sort_rows(rows, OverviewColumn::Rank, false);
  for (int r = 0; r < kWorld; ++r) ASSERT_EQ(rows[size_t(r)].rank, r);
  sort_rows(rows, OverviewColumn::StepTime, true);
  EXPECT_EQ(rows.front().rank, kSlow);
  sort_rows(rows, OverviewColumn::TimesLast, true);
  EXPECT_EQ(rows.front().rank, kLate);
  sort_rows(rows, OverviewColumn::Compute, false);
  EXPECT_EQ(rows.back().rank, kSlow);
}

// Traces without a summary among summaries are summarised on the way (their rows have no summary file), one
// file at a time: never two ranks' events in memory (the loader's progress says which files are being read).
TEST_F(ViewerOverviewManyRanks, ATraceWithoutItsSummaryIsSummarisedOnTheWay) {
  for (int r : {7, 8, 9, 10}) fs::remove(dir_ / fmt::format("rank{}.sqlite", r));
  const std::optional<SummaryInputs> in = find_summaries({dir_});
  ASSERT_TRUE(in);
  ASSERT_EQ(in->unsummarised.size(), 4u);
  EXPECT_EQ(in->unsummarised[0].filename(), "rank10.json");
  std::set<std::string> reading;
  size_t most_at_once = 0, files_done = 0;
  plugins::LoadOptions options;
  options.threads = 4;  // what the viewer could give it; a trace to summarise holds it to one
  options.on_progress = [&](const plugins::LoadProgress& p) {  // called one at a time
    if (p.files_done > files_done) reading.erase(p.file), files_done = p.files_done;
    if (!p.reading.empty()) reading.insert(p.reading);
    most_at_once = std::max(most_at_once, reading.size());
  };
  const RanksOverview o = open_overview(*in, options);
  EXPECT_EQ(most_at_once, 1u);
  EXPECT_EQ(files_done, size_t(kWorld));
  ASSERT_EQ(o.rows.size(), size_t(kWorld));
  EXPECT_EQ(o.events_loaded, 0u);  // their events were dropped once summarised
  EXPECT_EQ(o.straggler, kLate);
  const RankOverviewRow& r7 = row_of_rank(o, 7);
  EXPECT_TRUE(r7.summary.empty());
  const TraceLookup t = trace_of(r7);
  ASSERT_TRUE(t.path) << t.note;
  EXPECT_EQ(t.path->filename(), "rank7.json");
}

// A bad summary among good ones is named with its reason (keep_going, as the window loads) and the rest open.
// One of another schema version leaves its rank out; one too damaged to be recognised is read as what it
// then looks like (an SQLite file: an Nsight Systems export) and fails so, while its rank comes from the
// trace beside it.
TEST_F(ViewerOverviewManyRanks, ABadSummaryIsNamedAndTheOthersOpen) {
  plugins::LoadOptions options;
  options.keep_going = true;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "rank5.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = 99 WHERE key = 'schema_version'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  RanksOverview o = open_overview(*find_summaries({dir_}), options);
  ASSERT_EQ(o.failures.size(), 1u);
  EXPECT_EQ(fs::path(o.failures[0].path).filename(), "rank5.sqlite");
  EXPECT_NE(o.failures[0].message.find("schema version 99"), std::string::npos) << o.failures[0].message;
  EXPECT_EQ(o.rows.size(), size_t(kWorld - 1));
  for (const RankOverviewRow& r : o.rows) EXPECT_NE(r.rank, 5);

  fs::resize_file(dir_ / "rank6.sqlite", 3000);
  o = open_overview(*find_summaries({dir_}), options);
  ASSERT_EQ(o.failures.size(), 2u);
  EXPECT_EQ(fs::path(o.failures[1].path).filename(), "rank6.sqlite");
  EXPECT_NE(o.failures[1].message.find("malformed"), std::string::npos) << o.failures[1].message;
  EXPECT_EQ(o.rows.size(), size_t(kWorld - 1));
  EXPECT_TRUE(row_of_rank(o, 6).summary.empty());  // from rank6.json
}

// Traces only: not a run to open from summaries.
TEST_F(ViewerOverviewManyRanks, TracesAloneAreNotSummaries) {
  const fs::path traces = fresh_dir("traces-only");
  fs::copy_file(dir_ / "rank0.json", traces / "rank0.json");
  EXPECT_FALSE(find_summaries({traces}));
  fs::remove_all(traces);
}

// Where a rank's trace is: where the summary says; else beside the summary under its stem; else named as not found.
TEST_F(ViewerOverviewManyRanks, TheTraceIsFoundBesideItsSummaryOrNamedAsMissing) {
  const RanksOverview o = open_overview(*find_summaries({dir_}), {});
  RankOverviewRow r3 = row_of_rank(o, 3);
  const fs::path moved = fresh_dir("moved");
  fs::copy_file(dir_ / "rank3.sqlite", moved / "rank3.sqlite");
  fs::copy_file(dir_ / "rank3.json", moved / "rank3.json");
  fs::remove(dir_ / "rank3.json");
  r3.summary = (moved / "rank3.sqlite").string();
  TraceLookup t = trace_of(r3);
  ASSERT_TRUE(t.path) << t.note;
  EXPECT_EQ(*t.path, moved / "rank3.json");
  EXPECT_NE(t.note.find("beside its summary"), std::string::npos) << t.note;

  fs::remove(moved / "rank3.json");
  t = trace_of(r3);
  EXPECT_FALSE(t.path);
  EXPECT_NE(t.note.find("rank 3's trace was not found"), std::string::npos) << t.note;
  EXPECT_NE(t.note.find((moved / "rank3.json.gz").string()), std::string::npos) << t.note;
  EXPECT_NE(t.note.find(r3.source), std::string::npos) << t.note;
  fs::remove_all(moved);
}

}  // namespace
}  // namespace shardscope::viewer
