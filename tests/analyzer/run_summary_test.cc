// The run summary on constructed reports, each expected figure worked out by hand.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <tuple>

#include "analyzer/analysis/run_summary.h"
#include "analyzer/report/cells.h"
#include "analyzer/report/render.h"
#include "analyzer/report/summary_render.h"

namespace shardscope::analysis {
namespace {

report::RankReport rank_with_steps(int rank, std::vector<int64_t> window_ms, int64_t comm_ms, int64_t overlap_ms) {
  report::RankReport rr;
  rr.rank = rank;
  for (size_t i = 0; i < window_ms.size(); ++i) {
    report::StepRow row;
    row.step.number = int64_t(i);
    row.m.window_ns = window_ms[i] * 1'000'000;
    row.m.comm_ns = comm_ms * 1'000'000;
    row.m.overlap_ns = overlap_ms * 1'000'000;
    rr.steps.push_back(row);
  }
  return rr;
}

TEST(RunSummary, StepTimesCommunicationAndTheWorstRank) {
  report::Report r;
  // Step 0 of each rank is warm-up and left out: steady times 100, 110, 120 (rank 0) and 130, 300 (rank 1).
  r.ranks.push_back(rank_with_steps(0, {999, 100, 110, 120}, 10, 5));
  r.ranks.push_back(rank_with_steps(1, {999, 130, 300}, 40, 10));
  const RunSummary s = summarize_run(r);
  ASSERT_TRUE(s.step_time);
  EXPECT_EQ(s.step_time->steps, 5u);
  EXPECT_EQ(s.step_time->median_ns, 120'000'000);
  EXPECT_EQ(s.step_time->max_ns, 300'000'000);
  EXPECT_EQ(s.step_time->max_rank, 1);
  EXPECT_EQ(s.step_time->max_step, 2);
  EXPECT_EQ(s.steps, 4u);
  EXPECT_EQ(s.steady_steps, 3u);
  // Exposed share over steady steps: rank 0 3 x 5 / 330 = 4.545 %, rank 1 2 x 30 / 430 = 13.95 %.
  ASSERT_TRUE(s.exposed_pct);
  EXPECT_NEAR(s.exposed_pct->min, 100.0 * 15 / 330, 1e-9);
  EXPECT_NEAR(s.exposed_pct->max, 100.0 * 60 / 430, 1e-9);
  EXPECT_EQ(s.exposed_pct->max_rank, 1);
  EXPECT_EQ(s.worst_rank, 1);
  EXPECT_EQ(s.by_exposed, (std::vector<int>{1, 0}));
}

// Each summary figure says what it is taken over: two ranks give both values, three or more the median of
// them named as such, the step time its count of steps, and the wait share each rank's own.
TEST(RunSummary, EveryFigureSaysWhatItIsTakenOver) {
  report::Report r;
  r.ranks.push_back(rank_with_steps(0, {999, 100, 110}, 10, 5));
  r.ranks.push_back(rank_with_steps(1, {999, 130}, 40, 10));
  // Waits: rank 0 all_gather 100 ns of which the fastest rank took 50 (50 % waiting), reduce_scatter 300 ns
  // of which 300 (0 %): 50 / 400 = 12.5 %; rank 1: 200 ns, fastest 50: 75 %.
  auto coll = [](model::CollectiveKind k, int64_t time, int64_t link) {
    metrics::CollectiveStats c;
    c.kind = k, c.count = 1, c.time_ns = time, c.link_ns = link;
    return c;
  };
  r.ranks[0].collectives = {coll(model::CollectiveKind::AllGather, 100, 50),
                            coll(model::CollectiveKind::ReduceScatter, 300, 300)};
  r.ranks[1].collectives = {coll(model::CollectiveKind::AllGather, 200, 50)};
  RunSummary s = summarize_run(r);
  ASSERT_TRUE(s.wait_pct);
  EXPECT_NEAR(s.wait_pct->min, 12.5, 1e-9);
  EXPECT_NEAR(s.wait_pct->max, 75.0, 1e-9);
  s.links.push_back({model::CollectiveKind::AllGather, 1.0, 2.0});  // the line the wait share is said on
  std::string text;
  for (const std::string& l : report::summary_lines(s)) text += l + "\n";
  // Communication over the steady steps: rank 0 2 x 10 ms in 100 + 110 ms, rank 1 40 ms in 130 ms.
  EXPECT_NE(text.find("step time over all ranks' 3 steady steps: median 110.000 ms"), std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("communication (of the step): {:.1f} % on rank 0 and {:.1f} % on rank 1",
                                  100.0 * 20 / 210, 100.0 * 40 / 130)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("waiting for peers: 12.5 % on rank 0 and 75.0 % on rank 1 of each rank's collective time"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("median"), text.find("median 110.000 ms")) << text;  // no other median with two ranks
  // A third rank: the median of the three, named as such.
  r.ranks.push_back(rank_with_steps(2, {999, 120}, 30, 10));
  s = summarize_run(r);
  text.clear();
  for (const std::string& l : report::summary_lines(s)) text += l + "\n";
  EXPECT_NE(text.find(fmt::format("communication (of the step): median of 3 ranks {:.1f} % (min {:.1f} % on rank 0, "
                                  "max {:.1f} % on rank 1)",
                                  100.0 * 30 / 120, 100.0 * 20 / 210, 100.0 * 40 / 130)),
            std::string::npos)
      << text;
}

// The worst rank's steady step, term by term: compute only + overlapped + exposed + other + idle = the step.
TEST(RunSummary, TheStepBudgetAddsUpToTheStep) {
  report::Report r;
  r.ranks.push_back(rank_with_steps(3, {999, 100, 120}, 0, 0));
  // Per steady step (ms): window 100 and 120, compute 60 and 70, comm 30 and 50, overlap 10 and 20, busy 90 and
  // 110 (so a copy ran 10 ms outside compute and communication in each).
  const int64_t ms = 1'000'000;
  for (auto [i, c, m, o, b] : {std::tuple{1, 60, 30, 10, 90}, std::tuple{2, 70, 50, 20, 110}}) {
    metrics::WindowMetrics& w = r.ranks[0].steps[size_t(i)].m;
    w.compute_ns = c * ms, w.comm_ns = m * ms, w.overlap_ns = o * ms, w.busy_ns = b * ms;
  }
  const RunSummary s = summarize_run(r);
  ASSERT_TRUE(s.budget);
  EXPECT_EQ(s.budget->rank, 3);
  EXPECT_EQ(s.budget->steps, 2u);
  // Means: step 110, compute only (130 - 30) / 2 = 50, overlapped 15, exposed (80 - 30) / 2 = 25, other 10, idle 10.
  std::string text;
  for (const std::string& l : report::summary_lines(s)) text += l + "\n";
  EXPECT_NE(text.find("step budget (mean of its 2 steady steps): 110.0 ms = compute only 50.0 + overlapped 15.0 + "
                      "exposed communication 25.0 + other device work 10.0 + idle 10.0 ms"),
            std::string::npos)
      << text;
  // A step under 10 ms in µs, so that no term rounds to nothing: the same shares, a thousand times shorter.
  for (report::StepRow& row : r.ranks[0].steps) {
    metrics::WindowMetrics& w = row.m;
    for (int64_t* v : {&w.window_ns, &w.compute_ns, &w.comm_ns, &w.overlap_ns, &w.busy_ns}) *v /= 1000;
  }
  text.clear();
  for (const std::string& l : report::summary_lines(summarize_run(r))) text += l + "\n";
  EXPECT_NE(text.find("0.110 ms = compute only 0.050 + overlapped 0.015 + exposed communication 0.025 + other device "
                      "work 0.010 + idle 0.010 ms"),
            std::string::npos)
      << text;
}

TEST(RunSummary, TheStragglerIsTheRankMostOftenLastWithItsMedianLateness) {
  report::Report r;
  r.ranks.push_back(rank_with_steps(0, {1}, 0, 0));
  r.ranks.push_back(rank_with_steps(1, {1}, 0, 0));
  r.stragglers.ranks = {{0, 1, 7, 7}, {1, 3, 60, 40}};
  r.stragglers.instances = {{model::CollectiveKind::AllGather, 0, 1, 10, 10},
                            {model::CollectiveKind::AllGather, 1, 0, 7, 7},
                            {model::CollectiveKind::AllGather, 2, 1, 40, 40},
                            {model::CollectiveKind::AllGather, 3, 1, 10, 12}};
  const RunSummary s = summarize_run(r);
  ASSERT_TRUE(s.straggler);
  EXPECT_EQ(s.straggler->rank, 1);
  EXPECT_EQ(s.straggler->times_last, 3u);
  EXPECT_EQ(s.straggler->instances, 4u);
  EXPECT_EQ(s.straggler->median_late_ns, 10);  // of 10, 40, 10
}

TEST(RunSummary, AStragglerWithinTheArrivalsOwnSpreadIsNotNamed) {
  // Four ranks; rank 3 is last at 3 of 4 instances, by 2 ns, while the other ranks' arrivals spread over
  // 40-60 ns (spread minus lateness): jitter, not a straggler.
  report::Report r;
  for (int k = 0; k < 4; ++k) r.ranks.push_back(rank_with_steps(k, {1}, 0, 0));
  r.stragglers.ranks = {{0, 1, 5, 5}, {1, 0, 0, 0}, {2, 0, 0, 0}, {3, 3, 6, 2}};
  r.stragglers.instances = {{model::CollectiveKind::AllGather, 0, 3, 2, 42},
                            {model::CollectiveKind::AllGather, 1, 3, 2, 52},
                            {model::CollectiveKind::AllGather, 2, 0, 5, 65},
                            {model::CollectiveKind::AllGather, 3, 3, 2, 62}};
  RunSummary s = summarize_run(r);
  ASSERT_TRUE(s.straggler);
  EXPECT_EQ(s.straggler->rank, 3);
  EXPECT_EQ(s.straggler->median_late_ns, 2);
  EXPECT_EQ(s.straggler->noise_ns, 60);  // others' spreads 40, 50, 60, 60: nearest rank at 0.5 is the third
  EXPECT_FALSE(s.straggler->beyond_noise());
  std::string text;
  for (const std::string& l : report::summary_lines(s)) text += l + "\n";
  EXPECT_NE(text.find("straggler: none beyond the arrivals' own spread"), std::string::npos) << text;
  EXPECT_EQ(text.find("straggler: rank"), std::string::npos) << text;
  // Late by 80 ns each time instead: beyond the spread, named.
  for (metrics::StragglerInstance& in : r.stragglers.instances)
    if (in.last_rank == 3) in.spread_ns += 78, in.late_by_ns = 80;
  s = summarize_run(r);
  ASSERT_TRUE(s.straggler);
  EXPECT_TRUE(s.straggler->beyond_noise());
  text.clear();
  for (const std::string& l : report::summary_lines(s)) text += l + "\n";
  EXPECT_NE(text.find("straggler: rank 3 arrived last at 3 of 4"), std::string::npos) << text;
}

TEST(RunSummary, MemoryDepartsMostWhereMeasuredIsFurthestFromPredicted) {
  report::Report r;
  for (int k = 0; k < 2; ++k) {
    report::RankReport rr;
    rr.rank = k;
    rr.memory.rows.push_back({"gradients", 100.0, 100.0, {}, {}});
    rr.memory.rows.push_back({"activations", k == 1 ? 150.0 : 104.0, 100.0, {}, {}});
    rr.memory.all_agree = k == 0;
    r.ranks.push_back(rr);
  }
  const RunSummary s = summarize_run(r);
  EXPECT_EQ(s.memory_ranks, 2u);
  EXPECT_EQ(s.memory_ranks_agree, 1u);
  ASSERT_TRUE(s.departs_most);
  EXPECT_EQ(s.departs_most->rank, 1);
  EXPECT_EQ(s.departs_most->category, "activations");
}

TEST(RunSummary, RanksAsRangesAndSelections) {
  EXPECT_EQ(rank_ranges({7, 0, 1, 2, 5, 8, 9, 1}), "0-2, 5, 7-9");
  report::Report r;
  for (int k = 0; k < 4; ++k) r.ranks.push_back(rank_with_steps(k, {999, 100}, 10 * (k == 2 ? 5 : 1), 0));
  EXPECT_EQ(report::selected_ranks(r, {}), (std::vector<int>{2}));  // the most exposed
  EXPECT_EQ(report::selected_ranks(r, report::parse_selection("worst:2", "")).size(), 2u);
  EXPECT_EQ(report::selected_ranks(r, report::parse_selection("0,3", "")), (std::vector<int>{0, 3}));
  EXPECT_EQ(report::selected_ranks(r, report::parse_selection("all", "")).size(), 4u);
  EXPECT_THROW(report::selected_ranks(r, report::parse_selection("9", "")), std::invalid_argument);
  EXPECT_THROW(report::parse_selection("worst:0", ""), std::invalid_argument);
  EXPECT_THROW(report::parse_selection("1-", ""), std::invalid_argument);
  EXPECT_EQ(report::parse_selection("all", "1,4-6").steps, (std::vector<int64_t>{1, 4, 5, 6}));
}

// Issue #25: a range as wide as the type is refused (its width used to overflow and then allocate without
// bound), and a number beyond the type is refused rather than read as 0.
TEST(RunSummary, SelectionsOutOfRangeOrTooWideAreRefusedByValue) {
  auto message = [](const std::string& ranks, const std::string& steps) {
    try {
      report::parse_selection(ranks, steps);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message("all", "-9223372036854775808-9223372036854775807").find("more than 1000000 numbers"),
            std::string::npos);
  EXPECT_NE(message("-2147483648-2147483647", "").find("--ranks '-2147483648-2147483647': names more than 1000000"),
            std::string::npos);
  EXPECT_NE(message("0-600000,0-600000", "").find("more than 1000000"), std::string::npos);
  EXPECT_NE(message("worst:18446744073709551615-0", "").find("--ranks"), std::string::npos);
  EXPECT_NE(message("all", "0-18446744073709551615").find("out of range"), std::string::npos);
  EXPECT_NE(
      message("2147483648", "").find("--ranks '2147483648': 2147483648 is out of range (-2147483648 to 2147483647)"),
      std::string::npos);
  EXPECT_NE(message("all", "99999999999999999999")
                .find("--steps '99999999999999999999': 99999999999999999999 is out of range"),
            std::string::npos);
  EXPECT_NE(message("worst:99999999999999999999999", "").find("out of range"), std::string::npos);
  EXPECT_EQ(report::parse_selection("2147483647", "9223372036854775806-9223372036854775807").steps,
            (std::vector<int64_t>{9223372036854775806, 9223372036854775807}));
  EXPECT_EQ(report::parse_selection("-3--1", "").list, (std::vector<int>{-3, -2, -1}));
  EXPECT_EQ(report::parse_selection("all", "0-999999").steps.size(), 1'000'000u);
}

TEST(RunSummary, LongRankListsAreCapped) {
  EXPECT_EQ(rank_ranges({0, 2, 4, 6, 7, 8}, 2), "0, 2 and 4 more");
  EXPECT_EQ(rank_ranges({0, 2, 4}, 3), "0, 2, 4");
  // A cause that hit every even rank of 1,024: the prefetch line names the first few and counts the rest.
  RunSummary s;
  s.ranks = 1024;
  s.prefetch = metrics::Verdict::NotEffective;
  s.prefetch_ranks = 1024;
  s.prefetch_steps = 4096;
  s.common_cause = metrics::Cause::IssuedLate;
  s.common_cause_steps = 2048;
  for (int k = 0; k < 1024; k += 2) s.cause_ranks.push_back(k), s.cause_units.push_back(k);
  const std::vector<std::string> lines = report::summary_lines(s);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("ranks 0, 2, 4, 6, 8, 10 and 506 more"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("units 0, 2, 4, 6, 8, 10 and 506 more"), std::string::npos) << lines[1];
  EXPECT_LT(lines[1].size(), 250u) << lines[1];
}

TEST(RunSummary, TheDefaultShowsTheSlowestStepsAndSaysHowToSeeTheRest) {
  const report::RankReport rr = rank_with_steps(0, {50, 90, 70, 90, 10, 60}, 1, 0);
  // The two longest steady windows (90, 90: steps 1, 3), in step order; step 0 is warm-up.
  EXPECT_EQ(report::selected_steps(rr, {}), (std::vector<int64_t>{1, 3}));
  const std::string line = report::steps_left_out(rr, report::selected_steps(rr, {}), {});
  EXPECT_EQ(line, "the 2 slowest of 6 steps; 4 more: --steps all or a list like 0-5");
  const report::RankReport warm = rank_with_steps(0, {500, 90, 70, 80}, 1, 0);
  EXPECT_EQ(report::selected_steps(warm, {}), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(report::selected_steps(rr, report::parse_selection("worst", "all")).size(), 6u);
  EXPECT_EQ(report::selected_steps(rr, report::parse_selection("worst", "0,5")), (std::vector<int64_t>{0, 5}));
  EXPECT_EQ(report::steps_left_out(rr, {0, 5}, report::parse_selection("worst", "0,5")), "");
}

}  // namespace
}  // namespace shardscope::analysis

TEST(Cells, SizesInTheUnitThatFits) {
  EXPECT_EQ(shardscope::report::bytes_text(11126178000.0), "11.1 GB");  // not "11126.178 MB"
  EXPECT_EQ(shardscope::report::bytes_text(6960000.0), "6.960 MB");
  EXPECT_EQ(shardscope::report::bytes_text(2048.0), "2.0 kB");
  EXPECT_EQ(shardscope::report::bytes_text(512.0), "512 B");
  EXPECT_EQ(shardscope::report::bytes_text(-2.5e9), "-2.5 GB");
  EXPECT_EQ(shardscope::report::bytes_text(1e308), shardscope::report::kOutOfRange);
}
