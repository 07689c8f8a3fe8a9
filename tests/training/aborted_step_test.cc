// A step that does not complete (an exception in it, a lost peer, SIGTERM from a launcher) is marked in the
// rank's trace (args.aborted on its step range) and said in its log; the report leaves it out of the totals.
#include <gtest/gtest.h>

#include "tests/support/run.h"
#include "tests/training/ranks.h"
#include "tracer/format/keys.h"
#include "tracer/format/reader.h"

namespace shardscope::test {
namespace {

namespace keys = shardscope::keys;

// The trace's step ranges: step number -> the aborted reason ("" when the step completed).
std::map<int64_t, std::string> steps_of(const std::filesystem::path& trace) {
  std::map<int64_t, std::string> steps;
  for (const trace::Event& e : trace::read_trace(trace).events) {
    if (e.ph != 'X' || e.name != keys::kStepRange || e.cat != keys::kCatStep) continue;
    const int64_t n = e.args.value(keys::kArgStep, int64_t(-1));
    steps[n] = e.args.contains(keys::kArgAborted) ? e.args[keys::kArgAborted].get<std::string>() : "";
  }
  return steps;
}

TEST(AbortedStep, AFailingStepIsMarkedInTraceAndLogAndLeftOutOfTheReportTotals) {
  TempDir dir;
  const std::string log = (dir.path() / "log.jsonl").string();
  auto ranks = run_ranks(1,
                         {"--preset", "tiny", "--batch-size", "1", "--steps", "5", "--fail-at-step", "3", "--trace-dir",
                          dir.path().string(), "--log-json", log},
                         dir.path());
  EXPECT_EQ(ranks[0].rc, 3) << ranks[0].stderr_text();
  EXPECT_NE(ranks[0].stdout_text().find("step 3 aborted: planted failure (--fail-at-step 3)"), std::string::npos)
      << ranks[0].stdout_text();
  EXPECT_NE(ranks[0].stderr_text().find("error: planted failure (--fail-at-step 3)"), std::string::npos)
      << ranks[0].stderr_text();

  const auto trace = dir.path() / "trace.rank0.json.gz";
  auto steps = steps_of(trace);
  ASSERT_EQ(steps.size(), 4u);
  for (int64_t n : {0, 1, 2}) EXPECT_EQ(steps[n], "") << "step " << n;
  EXPECT_EQ(steps[3], "planted failure (--fail-at-step 3)");

  auto lines = read_log(log);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[3]["step"], 3);
  EXPECT_EQ(lines[3]["aborted"], "planted failure (--fail-at-step 3)");
  EXPECT_FALSE(lines[2].contains("aborted"));

  RunResult json_report = run({SHARDSCOPE_BIN, "report", "--format", "json", trace.string()});
  ASSERT_EQ(json_report.rc, 0) << json_report.err;
  const auto r = nlohmann::json::parse(json_report.out)["ranks"][0];
  ASSERT_EQ(r["steps"].size(), 4u);
  int64_t completed_ns = 0;
  for (const auto& s : r["steps"]) {
    EXPECT_EQ(s.value("aborted", false), s["step"] == 3) << s.dump();
    if (s["step"] != 3) completed_ns += s["step_ns"].get<int64_t>();
  }
  EXPECT_EQ(r["all_steps"]["step_ns"], completed_ns);
  EXPECT_EQ(r["aborted_steps"]["steps"], nlohmann::json::array({3}));

  // Every step's row (the default shows the slowest steady ones).
  RunResult text = run({SHARDSCOPE_BIN, "report", trace.string(), "--steps", "all"});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("3 (aborted)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("step 3 did not complete (the trace marks it aborted): left out of the all-steps row and the "
                          "prefetch verdict"),
            std::string::npos)
      << text.out;
}

// `shardscope launch` stops the group when one rank fails: the other rank, cut off in the same step (by the
// lost peer or by the launcher's SIGTERM), marks that step in its trace and says so.
TEST(AbortedStep, TheOtherRanksOfAFailedLaunchMarkTheStepTheyWereIn) {
  TempDir dir;
  RunResult r = run({SHARDSCOPE_BIN, "launch", "-n", "2", "--", TRAIN_BIN, "--preset", "tiny", "--batch-size", "1",
                     "--steps", "100", "--fail-at-step", "2", "--fail-rank", "1", "--trace-dir", dir.path().string()});
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("[rank 1] rank 1: step 2 aborted: planted failure (--fail-at-step 2)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("[rank 0] rank 0: step 2 aborted: "), std::string::npos) << r.out;
  for (int rank : {0, 1}) {
    auto steps = steps_of(dir.path() / ("trace.rank" + std::to_string(rank) + ".json.gz"));
    ASSERT_EQ(steps.count(2), 1u) << "rank " << rank;
    EXPECT_NE(steps[2], "") << "rank " << rank;
    EXPECT_EQ(steps.rbegin()->first, 2) << "rank " << rank;
    EXPECT_EQ(steps[1], "") << "rank " << rank;
  }
}

// SIGTERM in the middle of a step (a launcher or a scheduler stopping the job): the step is marked, the trace
// closed, and the rank still ends by the signal.
TEST(AbortedStep, SigtermInAStepMarksItAndEndsByTheSignal) {
  TempDir dir;
  // A planted sleep before each unit's backward makes a step last about half a second, so the signal lands
  // inside one.
  auto ranks = start_ranks(2,
                           {"--preset", "tiny", "--batch-size", "1", "--steps", "100000", "--slow-rank", "0",
                            "--slow-rank-ms", "100", "--trace-dir", dir.path().string()},
                           dir.path());
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (ranks[0].stdout_text().find("step 2 ") == std::string::npos && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_NE(ranks[0].stdout_text().find("step 2 "), std::string::npos) << ranks[0].stderr_text();
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  kill(ranks[0].pid, SIGTERM);
  wait_ranks(ranks, std::chrono::seconds(60));
  EXPECT_EQ(ranks[0].rc, 128 + SIGTERM) << ranks[0].stderr_text();
  const std::string out = ranks[0].stdout_text();
  const size_t at = out.find("aborted: stopped by SIGTERM");
  ASSERT_NE(at, std::string::npos) << out;
  const size_t line = out.rfind("rank 0: step ", at);
  ASSERT_NE(line, std::string::npos) << out;
  const int64_t aborted = std::stoll(out.substr(line + 13));
  auto steps = steps_of(dir.path() / "trace.rank0.json.gz");
  ASSERT_EQ(steps.count(aborted), 1u) << out;
  EXPECT_EQ(steps[aborted], "stopped by SIGTERM");
  EXPECT_EQ(steps.rbegin()->first, aborted);
  for (const auto& [n, why] : steps) {
    if (n != aborted) {
      EXPECT_EQ(why, "") << "step " << n;
    }
  }
}

}  // namespace
}  // namespace shardscope::test
