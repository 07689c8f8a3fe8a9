// `shardscope report`, `check-prefetch`, `diff` and `memory` as a user runs them: real trace files, the real
// binary, its exit code and output. Bad input gets a clear message and exit 2, never a crash.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string_view>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/analyzer/trainer_trace.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

using nlohmann::json;
using shardscope::test::run;
using shardscope::test::TempDir;
using shardscope::test::TrainerTraceOptions;
using shardscope::test::write_trainer_trace;
namespace fs = std::filesystem;

namespace {

const std::string kBin = SHARDSCOPE_BIN;

void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// A small PyTorch-profiler trace: one compute kernel, one NCCL kernel half under it, no ProfilerStep.
const char* kKineto = R"JSON({"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000, "traceEvents": [
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1.000, "dur": 1.000, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 10.000, "dur": 20.000, "args": {"stream": 7, "correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 9, "ts": 20.000, "dur": 20.000, "args": {"stream": 9, "correlation": 2}}
], "distributedInfo": {"rank": 0, "world_size": 1}})JSON";

fs::path two_ranks(const TempDir& d, const std::string& prefetch, const std::string& sub) {
  fs::path dir = d.path() / sub;
  fs::create_directories(dir);
  for (int r = 0; r < 2; ++r) {
    TrainerTraceOptions o;
    o.rank = r;
    o.prefetch = prefetch;
    write_trainer_trace(dir / ("trace.rank" + std::to_string(r) + ".json"), o);
  }
  return dir;
}

TEST(ReportCli, JsonHasSchemaRanksWholeTraceAndSteps) {
  TempDir d;
  fs::path dir = two_ranks(d, "pre", "run");
  auto r = run({kBin, "report", dir.string(), "--format", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "shardscope.report/1");
  ASSERT_EQ(j["ranks"].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const json& rank = j["ranks"][i];
    EXPECT_EQ(rank["rank"], i);
    const json& w = rank["whole_trace"];
    for (const char* k : {"window_ns", "overlap_pct", "idle_pct", "compute_pct", "non_compute_pct"})
      EXPECT_TRUE(w.contains(k)) << k;
    // idle + compute + non-compute is the whole window.
    EXPECT_NEAR(w["idle_pct"].get<double>() + w["compute_pct"].get<double>() + w["non_compute_pct"].get<double>(),
                100.0, 0.01);
    ASSERT_EQ(rank["steps"].size(), 2u);
    const json& s = rank["steps"][0];
    EXPECT_EQ(s["step_ns"].get<int64_t>() - s["idle_ns"].get<int64_t>() >= s["compute_ns"].get<int64_t>(), true);
    EXPECT_EQ(s["exposed_ns"].get<int64_t>(), s["comm_ns"].get<int64_t>() - s["overlap_ns"].get<int64_t>());
    EXPECT_EQ(rank["prefetch"]["verdict"], "effective");
    EXPECT_EQ(rank["collectives"][0]["kind"], "all_gather");
  }
  EXPECT_EQ(j["stragglers"]["ranks"].size(), 2u);
}

// Sums of a trace's durations saturate rather than wrap; a total at the end of int64 is never shown as a
// number (issue #25 item 4).
TEST(ReportCli, ATotalBeyondInt64IsAnErrorNamingTheTrace) {
  TempDir d;
  // Three all-gathers of 4e15 µs each: each fits, their sum does not.
  std::string events;
  for (int i = 1; i <= 3; ++i)
    events +=
        std::string(i > 1 ? "," : "") +
        R"J({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(x)", "pid": 0, "tid": 7, "ts": )J" +
        std::to_string(i) + R"J(, "dur": 4000000000000000, "args": {"stream": 7}})J";
  write(d.path() / "big.json", R"({"traceEvents": [)" + events + "]}");
  for (const char* format : {"text", "json", "html"}) {
    auto r = run({kBin, "report", "--format", format, (d.path() / "big.json").string()});
    EXPECT_EQ(r.rc, 2) << format;
    EXPECT_NE(r.err.find("shardscope: error: " + (d.path() / "big.json").string() +
                         ": at byte 0: the all_gather collectives' durations or sizes add up to more than 64-bit"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out.find("9223372036854"), std::string::npos) << r.out;
  }
}

TEST(ReportCli, LatenessBetweenClocksNotAnchoredToOneAnotherIsNotPrinted) {
  TempDir d;
  // Rank 0 maps its clock onto a wall clock near the end of int64; rank 1 has no clock pairs, so its raw
  // clock (about 1 s) is compared with rank 0's wall times: every instance rank 0 is 9e18 ns late.
  for (int r = 0; r < 2; ++r) {
    TrainerTraceOptions o;
    o.rank = r;
    if (r == 0) o.clock_pairs = {{1'000'000'000, 9'000'000'000'000'000'000}};
    write_trainer_trace(d.path() / ("trace.rank" + std::to_string(r) + ".json"), o);
  }
  // The clocks are not anchored to one another: no straggler and no lateness, saturated or not, but the reason.
  auto text = run({kBin, "report", "--ranks", "all", d.path().string()});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_EQ(text.out.find("9223372036854"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("over 2^63 ns"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("n/a: the ranks' clocks are not anchored to one another"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("rank(s) 1 carry no clock_sync pairs"), std::string::npos) << text.out;
  auto json_out = run({kBin, "report", "--format", "json", d.path().string()});
  const nlohmann::json j = nlohmann::json::parse(json_out.out);
  EXPECT_TRUE(j["stragglers"]["ranks"].empty()) << j["stragglers"];
  EXPECT_NE(j["stragglers"]["reason"].get<std::string>().find("not anchored"), std::string::npos) << j["stragglers"];
}

TEST(ReportCli, TextAndMarkdownAndOutputFile) {
  TempDir d;
  fs::path dir = two_ranks(d, "pre", "run");
  auto text = run({kBin, "report", dir.string(), "--ranks", "all"});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("rank 0:"), std::string::npos);
  EXPECT_NE(text.out.find("rank 1:"), std::string::npos);
  EXPECT_NE(text.out.find("overlap"), std::string::npos);
  auto md = run({kBin, "report", dir.string(), "--format", "md"});
  ASSERT_EQ(md.rc, 0);
  EXPECT_NE(md.out.find("| step |"), std::string::npos) << md.out;
  fs::path out = d.path() / "report.html";
  auto html = run({kBin, "report", dir.string(), "--format", "html", "-o", out.string()});
  ASSERT_EQ(html.rc, 0) << html.err;
  EXPECT_TRUE(html.out.empty());
  EXPECT_GT(fs::file_size(out), 1000u);
}

TEST(ReportCli, HtmlIsSelfContainedAndEscapesHostileNames) {
  TempDir d;
  const std::string hostile = R"(<script>alert("pwned")</script><img src=x onerror='y'>&)";
  TrainerTraceOptions o;
  o.hostile_name = hostile;
  write_trainer_trace(d.path() / "t.json", o);
  // --steps all: every row of the top device activity, the hostile name's among them.
  auto r = run({kBin, "report", (d.path() / "t.json").string(), "--format", "html", "--steps", "all"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.find("<script"), std::string::npos);
  EXPECT_EQ(r.out.find("<img"), std::string::npos);
  EXPECT_NE(
      r.out.find("&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;&lt;img src=x onerror=&#39;y&#39;&gt;&amp;"),
      std::string::npos);
  EXPECT_NE(r.out.find("<svg"), std::string::npos);
  // No network: nothing is fetched (the only URL is the SVG namespace name).
  EXPECT_EQ(r.out.find("src=\""), std::string::npos);
  EXPECT_EQ(r.out.find("href="), std::string::npos);
  EXPECT_EQ(r.out.find("https://"), std::string::npos);
  // Markdown tables escape it too (a renderer would otherwise run it as HTML).
  auto md = run({kBin, "report", (d.path() / "t.json").string(), "--format", "md", "--steps", "all"});
  ASSERT_EQ(md.rc, 0) << md.err;
  EXPECT_EQ(md.out.find("<script"), std::string::npos);
  EXPECT_NE(md.out.find("&lt;script&gt;"), std::string::npos) << md.out;
}

TEST(ReportCli, KinetoWithoutStepsSaysSo) {
  TempDir d;
  write(d.path() / "k.json", kKineto);
  auto r = run({kBin, "report", (d.path() / "k.json").string(), "--format", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  const json& rank = j["ranks"][0];
  EXPECT_EQ(rank["format"], "kineto");
  // Window [10, 40) µs: compute 20, comm [20, 40) of which [20, 30) under compute: overlap 50 %, idle 0.
  EXPECT_EQ(rank["whole_trace"]["window_ns"], 30000);
  EXPECT_DOUBLE_EQ(rank["whole_trace"]["overlap_pct"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(rank["whole_trace"]["idle_pct"].get<double>(), 0.0);
  EXPECT_TRUE(rank["all_steps"].is_null());
  EXPECT_NE(rank["na"]["steps"].get<std::string>().find("n/a: no steps"), std::string::npos);
  EXPECT_EQ(rank["collectives"][0]["kind"], "all_reduce");
}

// A hostile Kineto file: kernels near both ends of the int64 ns range, durations whose sums pass INT64_MAX,
// message sizes whose bytes overflow. Every total saturates (signed overflow aborts this sanitized binary).
// Computed without a wrap (UBSan checks), then refused by name: the sums leave int64.
TEST(ReportCli, TimesAndSizesAtTheInt64ExtremesAreRefusedWithoutOverflow) {
  TempDir d;
  write(d.path() / "k.json", R"JSON({"baseTimeNanoseconds": 0, "traceEvents": [
{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": -9000000000000000, "dur": 6000000000000000, "args": {"stream": 7}},
{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 0, "dur": 6000000000000000, "args": {"stream": 7}},
{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 9, "ts": -9000000000000000, "dur": 5000000000000000,
 "args": {"stream": 9, "Collective name": "allreduce", "In msg nelems": 2000000000000000000, "Group size": 2, "dtype": "Float"}},
{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 9, "ts": -3000000000000000, "dur": 1,
 "args": {"stream": 9, "Collective name": "allreduce", "In msg nelems": 9223372036854775000, "Group size": 2, "dtype": "Float"}},
{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 9, "ts": 1000000000000000, "dur": 5000000000000000,
 "args": {"stream": 9, "Collective name": "allreduce", "In msg nelems": 2000000000000000000, "Group size": 2, "dtype": "Float"}}
], "distributedInfo": {"rank": 0, "world_size": 1}})JSON");
  for (const char* format : {"html", "text", "md"}) {
    auto r = run({kBin, "report", (d.path() / "k.json").string(), "--format", format});
    EXPECT_EQ(r.rc, 2) << format << ": " << r.err;
    EXPECT_NE(r.err.find((d.path() / "k.json").string() +
                         ": at byte 0: the all_reduce collectives' durations or sizes add up to more than"),
              std::string::npos)
        << r.err;
  }
}

TEST(ReportCli, NoDeviceEventsSaysWhy) {
  TempDir d;
  std::string t =
      R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]})";
  write(d.path() / "cpu.json", t);
  auto r = run({kBin, "report", (d.path() / "cpu.json").string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("whole trace: n/a: no device events"), std::string::npos) << r.out;
  auto j = run({kBin, "report", (d.path() / "cpu.json").string(), "--format", "json"});
  EXPECT_TRUE(json::parse(j.out)["ranks"][0]["whole_trace"].is_null());
}

TEST(ReportCli, RanksWithDifferentStepCountsAreNoted) {
  TempDir d;
  TrainerTraceOptions a, b;
  b.rank = 1;
  b.steps = 3;
  write_trainer_trace(d.path() / "a.json", a);
  write_trainer_trace(d.path() / "b.json", b);
  auto r = run({kBin, "report", d.path().string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("different step counts"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stragglers:"), std::string::npos) << r.out;
}

TEST(ReportCli, ADirectoryPassesOverFilesThatAreNotTraces) {
  // A trainer's --trace-dir often holds its --log-json too: the report reads the traces and says so.
  TempDir d;
  write_trainer_trace(d.path() / "trace.rank0.json", TrainerTraceOptions{});
  std::ofstream(d.path() / "log.json") << "{\"step\": 0, \"loss\": 5.5}\n";
  auto r = run({kBin, "report", d.path().string()});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("log.json: passed over: not a trace"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("1 rank(s)"), std::string::npos) << r.out;
  // Named explicitly, the same file is an error.
  auto named = run({kBin, "report", (d.path() / "log.json").string()});
  EXPECT_EQ(named.rc, 2);
  EXPECT_NE(named.err.find("unknown format"), std::string::npos) << named.err;
  // A directory with nothing readable at all is an error too.
  TempDir only_logs;
  std::ofstream(only_logs.path() / "log.json") << "{}\n";
  auto none = run({kBin, "report", only_logs.path().string()});
  EXPECT_EQ(none.rc, 2);
  EXPECT_NE(none.err.find("no file here is a trace"), std::string::npos) << none.err;
}

TEST(ReportCli, BadInputExitsTwoWithAClearMessage) {
  TempDir d;
  auto missing = run({kBin, "report", (d.path() / "nope.json").string()});
  EXPECT_EQ(missing.rc, 2);
  EXPECT_NE(missing.err.find("no such file or directory"), std::string::npos) << missing.err;

  fs::create_directories(d.path() / "empty");
  auto empty = run({kBin, "report", (d.path() / "empty").string()});
  EXPECT_EQ(empty.rc, 2);
  EXPECT_NE(empty.err.find("no trace files"), std::string::npos) << empty.err;
  EXPECT_EQ(empty.err.find("subdirectories"), std::string::npos) << empty.err;

  // Runs kept one per subdirectory: the message names them.
  fs::create_directories(d.path() / "runs" / "control");
  fs::create_directories(d.path() / "runs" / "test");
  auto nested = run({kBin, "report", (d.path() / "runs").string()});
  EXPECT_EQ(nested.rc, 2);
  EXPECT_NE(nested.err.find("it has subdirectories (control/, test/)"), std::string::npos) << nested.err;

  write(d.path() / "empty.json", "");
  auto empty_file = run({kBin, "report", (d.path() / "empty.json").string()});
  EXPECT_EQ(empty_file.rc, 2);
  EXPECT_NE(empty_file.err.find("empty.json: at byte 0: empty file"), std::string::npos) << empty_file.err;

  write(d.path() / "garbage.json", "this is not json at all");
  auto garbage = run({kBin, "report", (d.path() / "garbage.json").string()});
  EXPECT_EQ(garbage.rc, 2);
  EXPECT_NE(garbage.err.find("garbage.json"), std::string::npos) << garbage.err;
  EXPECT_NE(garbage.err.find("unknown format"), std::string::npos) << garbage.err;

  write(d.path() / "other.json", R"({"foo": [1, 2, 3]})");
  auto other = run({kBin, "report", (d.path() / "other.json").string()});
  EXPECT_EQ(other.rc, 2);
  EXPECT_NE(other.err.find("unknown format"), std::string::npos) << other.err;

  write(
      d.path() / "broken.json",
      R"({"traceEvents": [{"ph": "X", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {"stream": 7}} x ]})");
  auto broken = run({kBin, "report", (d.path() / "broken.json").string()});
  EXPECT_EQ(broken.rc, 2);
  EXPECT_NE(broken.err.find("broken.json: at byte"), std::string::npos) << broken.err;

  write(d.path() / "corrupt.json.gz", std::string("\x1f\x8b\x08\x00garbagegarbagegarbage", 25));
  auto corrupt = run({kBin, "report", (d.path() / "corrupt.json.gz").string()});
  EXPECT_EQ(corrupt.rc, 2);
  EXPECT_NE(corrupt.err.find("corrupt.json.gz"), std::string::npos) << corrupt.err;
}

// Issue #25: --ranks and --steps as wide as their type, or beyond it, are one line and exit 2, not an abort
// from bad_alloc and not a silent 0.
TEST(ReportCli, SelectionsBeyondTheirRangeExitTwoWithOneLine) {
  TempDir d;
  fs::path dir = two_ranks(d, "pre", "run");
  const std::vector<std::vector<std::string>> cases = {
      {kBin, "report", dir.string(), "--steps=-9223372036854775808-9223372036854775807"},
      {kBin, "check-prefetch", dir.string(), "--ranks=-2147483648-2147483647"},
      {kBin, "report", dir.string(), "--ranks=99999999999999999999"},
      {kBin, "report", dir.string(), "--ranks=2147483648"},
      {kBin, "check-prefetch", dir.string(), "--steps=99999999999999999999"},
  };
  for (const auto& argv : cases) {
    SCOPED_TRACE(argv[3]);
    auto r = run(argv);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_EQ(r.err.rfind("shardscope: error: --", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_TRUE(r.err.find("out of range") != std::string::npos ||
                r.err.find("more than 1000000 numbers") != std::string::npos)
        << r.err;
  }
}

TEST(ReportCli, TruncatedFilesLoadWithAWarning) {
  TempDir d;
  std::string k = kKineto;
  // Cut inside the NCCL kernel event: the first two events are whole.
  write(d.path() / "cut.json", k.substr(0, k.find("ncclDevKernel") + 5));
  auto r = run({kBin, "report", (d.path() / "cut.json").string(), "--format", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("cut off"), std::string::npos) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["ranks"][0]["events"], 2);
  EXPECT_EQ(j["ranks"][0]["whole_trace"]["overlap_pct"], nullptr);
  EXPECT_NE(j["ranks"][0]["whole_trace"]["na"]["overlap_pct"].get<std::string>().find("no communication"),
            std::string::npos);

  TrainerTraceOptions o;
  write_trainer_trace(d.path() / "own.json", o);
  std::string own;
  {
    std::ifstream in(d.path() / "own.json");
    own.assign(std::istreambuf_iterator<char>(in), {});
  }
  write(d.path() / "own.json", own.substr(0, own.size() * 2 / 3));
  auto r2 = run({kBin, "report", (d.path() / "own.json").string()});
  EXPECT_EQ(r2.rc, 0) << r2.err;
  EXPECT_NE(r2.err.find("cut off"), std::string::npos) << r2.err;
}

TEST(CheckPrefetchCli, ExitCodesGateACi) {
  TempDir d;
  auto pre = run({kBin, "check-prefetch", two_ranks(d, "pre", "pre").string()});
  EXPECT_EQ(pre.rc, 0) << pre.out << pre.err;
  EXPECT_EQ(pre.out.rfind("verdict: effective", 0), 0u) << pre.out;     // the answer first
  EXPECT_EQ(pre.out.find("issue lead"), std::string::npos) << pre.out;  // per-unit rows on demand
  auto units = run({kBin, "check-prefetch", (d.path() / "pre").string(), "--units"});
  EXPECT_NE(units.out.find("issue lead"), std::string::npos) << units.out;
  auto none = run({kBin, "check-prefetch", two_ranks(d, "none", "none").string()});
  EXPECT_EQ(none.rc, 1) << none.out << none.err;
  EXPECT_NE(none.out.find("issued late"), std::string::npos) << none.out;
  write(d.path() / "k.json", kKineto);
  auto na = run({kBin, "check-prefetch", (d.path() / "k.json").string()});
  EXPECT_EQ(na.rc, 2) << na.out;
  auto missing = run({kBin, "check-prefetch", (d.path() / "missing").string()});
  EXPECT_EQ(missing.rc, 2);
  auto j = run({kBin, "check-prefetch", (d.path() / "none").string(), "--format", "json"});
  EXPECT_EQ(j.rc, 1);
  EXPECT_EQ(json::parse(j.out)["ranks"][0]["verdict"], "not effective");
}

TEST(DiffCli, ShowsMetricAndUnitChanges) {
  TempDir d;
  fs::path a = two_ranks(d, "pre", "a"), b = two_ranks(d, "none", "b");
  // The run-level answer first; the rank pairs' tables and their unit rows on demand.
  auto first = run({kBin, "diff", a.string(), b.string()});
  ASSERT_EQ(first.rc, 0) << first.err;
  EXPECT_NE(first.out.find("step_time_ms"), std::string::npos) << first.out;
  EXPECT_EQ(first.out.find("unit 2 all-gather hidden %"), std::string::npos) << first.out;
  auto r = run({kBin, "diff", a.string(), b.string(), "--ranks", "--units"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("unit 2 all-gather hidden %"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mean step time ms"), std::string::npos) << r.out;
  auto j = run({kBin, "diff", a.string(), b.string(), "--format", "json", "--ranks", "--units"});
  ASSERT_EQ(j.rc, 0);
  json parsed = json::parse(j.out);
  ASSERT_EQ(parsed["ranks"].size(), 2u) << j.out;
  // "none" hides nothing: the unit's hidden share drops from 100 % to 0 %.
  for (const json& row : parsed["ranks"][0]["diff"])
    if (row["metric"] == "unit 1 all-gather hidden %") {
      EXPECT_DOUBLE_EQ(row["a"].get<double>(), 100.0);
      EXPECT_DOUBLE_EQ(row["b"].get<double>(), 0.0);
    }
  auto bad = run({kBin, "diff", a.string(), (d.path() / "missing").string()});
  EXPECT_EQ(bad.rc, 2);
}

TEST(MemoryCli, ZeroPaperNumbersAndJson) {
  auto t = run({kBin, "memory", "--params", "7.5e9", "--world", "64"});
  ASSERT_EQ(t.rc, 0) << t.err;
  for (const char* gb : {"120.0", "31.4", "16.6", "1.9"})
    EXPECT_NE(t.out.find(gb), std::string::npos) << gb << "\n" << t.out;
  auto j = run({kBin, "memory", "--params", "7.5e9", "--world", "64", "--stage", "2", "--format", "json"});
  ASSERT_EQ(j.rc, 0) << j.err;
  json parsed = json::parse(j.out);
  EXPECT_NEAR(parsed["model_states_bytes"].get<double>() / 1e9, 16.6, 0.05);
  auto preset = run({kBin, "memory", "--preset", "8b", "--world", "8", "--format", "json"});
  ASSERT_EQ(preset.rc, 0) << preset.err;
  EXPECT_GT(json::parse(preset.out)["params"].get<double>(), 7e9);
  auto bad = run({kBin, "memory", "--world", "8"});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--preset"), std::string::npos);
}

// --- One run: files whose headers disagree are not analysed as one run ---

// A one-kernel PyTorch-profiler file of this rank, world size and wall-clock base.
std::string kineto_rank(int rank, int world, int64_t base_ns) {
  return R"J({"schemaVersion": 1, "baseTimeNanoseconds": )J" + std::to_string(base_ns) + R"J(, "traceEvents": [
{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 10.000, "dur": 20.000, "args": {"stream": 7}}
], "distributedInfo": {"rank": )J" +
         std::to_string(rank) + R"J(, "world_size": )J" + std::to_string(world) + "}}";
}

// Every command that reads traces refuses them the same way: exit 2, the files and what differs on stderr.
void expect_refused_everywhere(const fs::path& dir, const std::vector<std::string>& in_message) {
  TempDir other;
  write_trainer_trace(other.path() / "trace.rank0.json", TrainerTraceOptions{});
  for (const std::vector<std::string>& args : {std::vector<std::string>{kBin, "report", dir.string()},
                                               {kBin, "report", dir.string(), "--format", "json"},
                                               {kBin, "check-prefetch", dir.string()},
                                               {kBin, "diff", dir.string(), other.path().string()},
                                               {kBin, "diff", other.path().string(), dir.string()}}) {
    auto r = run(args);
    EXPECT_EQ(r.rc, 2) << args[1] << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("shardscope: error: "), std::string::npos) << args[1] << ": " << r.err;
    for (const std::string& m : in_message)
      EXPECT_NE(r.err.find(m), std::string::npos) << args[1] << ": no \"" << m << "\" in: " << r.err;
  }
}

TEST(OneRun, AnEarlierLargerRunInTheDirectoryIsAnError) {
  // A 4-rank run wrote trace.rank0..3; a 2-rank run then overwrote rank0 and rank1 in the same directory.
  TempDir d;
  for (int r = 0; r < 4; ++r) {
    TrainerTraceOptions o;
    o.rank = r;
    o.world = r < 2 ? 2 : 4;
    write_trainer_trace(d.path() / ("trace.rank" + std::to_string(r) + ".json"), o);
  }
  const std::string p = d.path().string() + "/trace.rank";
  expect_refused_everywhere(d.path(),
                            {"not one run", "world_size", "world_size 2 in " + p + "0.json and " + p + "1.json",
                             "world_size 4 in " + p + "2.json and " + p + "3.json"});
}

TEST(OneRun, ADifferentRunConfigurationIsAnErrorNamingTheKey) {
  TempDir d;
  TrainerTraceOptions a, b;
  b.rank = 1;
  b.prefetch = "none";
  write_trainer_trace(d.path() / "trace.rank0.json", a);
  write_trainer_trace(d.path() / "trace.rank1.json", b);
  expect_refused_everywhere(d.path(),
                            {"run_config.backward_prefetch is \"pre\" in " + (d.path() / "trace.rank0.json").string() +
                             " but \"none\" in " + (d.path() / "trace.rank1.json").string()});
  // A nested difference names its path.
  TempDir m;
  a.run_config_extra = {{"model", {{"layers", 4}, {"dim", 128}}}};
  b = a;
  b.rank = 1;
  b.run_config_extra = {{"model", {{"layers", 4}, {"dim", 256}}}};
  write_trainer_trace(m.path() / "a.json", a);
  write_trainer_trace(m.path() / "b.json", b);
  auto nested = run({kBin, "report", m.path().string()});
  EXPECT_EQ(nested.rc, 2);
  EXPECT_NE(nested.err.find("run_config.model.dim is 128 in"), std::string::npos) << nested.err;
  // A key that does not shape the run (one a program wrote for itself) only warns.
  TempDir w;
  TrainerTraceOptions x, y;
  y.rank = 1;
  x.run_config_extra = {{"job_note", "first"}};
  y.run_config_extra = {{"job_note", "second"}};
  write_trainer_trace(w.path() / "x.json", x);
  write_trainer_trace(w.path() / "y.json", y);
  auto warned = run({kBin, "report", w.path().string()});
  EXPECT_EQ(warned.rc, 0) << warned.err;
  EXPECT_NE(
      warned.err.find("shardscope: warning: the ranks' run configurations differ: run_config.job_note is \"first\" in"),
      std::string::npos)
      << warned.err;
  EXPECT_NE(warned.out.find("warning: the ranks' run configurations differ"), std::string::npos) << warned.out;
}

TEST(OneRun, TwoFilesOfOneRankOrARankBeyondTheWorldAreErrors) {
  TempDir d;
  write_trainer_trace(d.path() / "run_a.rank0.json", TrainerTraceOptions{});
  write_trainer_trace(d.path() / "run_b.rank0.json", TrainerTraceOptions{});
  expect_refused_everywhere(d.path(), {(d.path() / "run_a.rank0.json").string() + " and " +
                                       (d.path() / "run_b.rank0.json").string() + " both say they are rank 0"});

  TempDir beyond;
  TrainerTraceOptions o;
  o.rank = 3;
  write_trainer_trace(beyond.path() / "trace.rank3.json", o);
  auto r = run({kBin, "report", beyond.path().string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("trace.rank3.json says it is rank 3 but its world_size is 2"), std::string::npos) << r.err;
}

// Minutes apart warns; hours apart is another run (refused, or with --allow-mixed a warning).
TEST(OneRun, StartTimesFarApartWarnOrRefuseNamingBothFiles) {
  constexpr int64_t kWall = 1'700'000'000'000'000'000, kHour = 3'600'000'000'000, kMin = 60'000'000'000;
  auto two = [&](const fs::path& dir, int64_t apart_ns) {
    fs::create_directories(dir);
    for (int r = 0; r < 2; ++r) {
      TrainerTraceOptions o;
      o.rank = r;
      o.clock_pairs = {{o.t0_ns - 1'000, kWall + (r == 1 ? apart_ns : 0)}};
      write_trainer_trace(dir / ("trace.rank" + std::to_string(r) + ".json"), o);
    }
  };
  TempDir d;
  two(d.path() / "minutes", 35 * kMin);
  auto m = run({kBin, "report", (d.path() / "minutes").string()});
  EXPECT_EQ(m.rc, 0) << m.err;
  const std::string late = (d.path() / "minutes" / "trace.rank1.json").string() + " starts 35 min 0 s after " +
                           (d.path() / "minutes" / "trace.rank0.json").string();
  EXPECT_NE(m.err.find("shardscope: warning: " + late), std::string::npos) << m.err;
  EXPECT_NE(m.out.find("warning: " + late), std::string::npos) << m.out;

  two(d.path() / "apart", 2 * kHour + 5 * kMin);
  const std::string want = (d.path() / "apart" / "trace.rank1.json").string() + " starts 2 h 5 min after " +
                           (d.path() / "apart" / "trace.rank0.json").string();
  expect_refused_everywhere(d.path() / "apart", {"these files are not one run: " + want, "--allow-mixed"});
  auto allowed = run({kBin, "report", (d.path() / "apart").string(), "--allow-mixed"});
  EXPECT_EQ(allowed.rc, 0) << allowed.err;
  EXPECT_NE(allowed.err.find("shardscope: warning: these files may not be one run (--allow-mixed: analysed "
                             "together): " +
                             want),
            std::string::npos)
      << allowed.err;
  // Seconds apart is one run starting.
  two(d.path() / "together", 3'000'000'000);
  auto t = run({kBin, "report", (d.path() / "together").string()});
  EXPECT_EQ(t.rc, 0) << t.err;
  EXPECT_EQ(t.err.find("starts"), std::string::npos) << t.err;

  // Kineto files: their times are on the wall clock already (baseTimeNanoseconds).
  TempDir k;
  write(k.path() / "rank0.json", kineto_rank(0, 2, kWall));
  write(k.path() / "rank1.json", kineto_rank(1, 2, kWall + 3 * 24 * kHour));
  auto kr = run({kBin, "report", k.path().string()});
  EXPECT_EQ(kr.rc, 2);
  EXPECT_NE(kr.err.find("rank1.json starts 3 days 0 h after"), std::string::npos) << kr.err;
  write(k.path() / "rank1.json", kineto_rank(1, 4, kWall));
  auto kw = run({kBin, "report", k.path().string()});
  EXPECT_EQ(kw.rc, 2);
  EXPECT_NE(kw.err.find("world_size 2 in " + (k.path() / "rank0.json").string() + "; world_size 4 in " +
                        (k.path() / "rank1.json").string()),
            std::string::npos)
      << kw.err;
  auto kwa = run({kBin, "report", k.path().string(), "--allow-mixed", "--format", "json"});
  EXPECT_EQ(kwa.rc, 0) << kwa.err;
  EXPECT_NE(kwa.err.find("warning: these files may not be one run (--allow-mixed: analysed together): their headers "
                         "differ in world_size"),
            std::string::npos)
      << kwa.err;
}

// A Kineto rank whose distributedInfo also says this backend.
std::string kineto_rank_of(int rank, int world, const std::string& backend) {
  json j = json::parse(kineto_rank(rank, world, 1'700'000'000'000'000'000));
  j["distributedInfo"]["backend"] = backend;
  return j.dump();
}

TEST(OneRun, ADifferentDistributedInfoIsAnErrorUnlessAllowMixed) {
  TempDir d;
  write(d.path() / "a.json", kineto_rank_of(0, 2, "nccl"));
  write(d.path() / "b.json", kineto_rank_of(1, 2, "gloo"));
  expect_refused_everywhere(d.path(),
                            {"these files are not one run: distributedInfo.backend is \"nccl\" in " +
                             (d.path() / "a.json").string() + " but \"gloo\" in " + (d.path() / "b.json").string()});
  for (const char* cmd : {"report", "check-prefetch"}) {
    auto r = run({kBin, cmd, d.path().string(), "--allow-mixed"});
    if (cmd == std::string("report")) {
      EXPECT_EQ(r.rc, 0) << r.err;  // check-prefetch: nothing to check here
    }
    EXPECT_NE(r.err.find("warning: these files may not be one run (--allow-mixed: analysed together): "
                         "distributedInfo.backend is \"nccl\""),
              std::string::npos)
        << cmd << ": " << r.err;
  }
  // The rank's own place differs on every rank; one backend is one run.
  write(d.path() / "b.json", kineto_rank_of(1, 2, "nccl"));
  auto same = run({kBin, "report", d.path().string()});
  EXPECT_EQ(same.rc, 0) << same.err;
  EXPECT_EQ(same.err.find("warning"), std::string::npos) << same.err;
}

TEST(OneRun, TheSameRankTwiceIsAWarningWithAllowMixed) {
  TempDir d;
  write_trainer_trace(d.path() / "run_a.rank0.json", TrainerTraceOptions{});
  write_trainer_trace(d.path() / "run_b.rank0.json", TrainerTraceOptions{});
  auto r = run({kBin, "report", d.path().string(), "--allow-mixed"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find((d.path() / "run_a.rank0.json").string() + " and " + (d.path() / "run_b.rank0.json").string() +
                       " both say they are rank 0"),
            std::string::npos)
      << r.err;
}

// Summaries of two runs in one folder: the message names the summary files the user gave, and the traces they
// summarise beside them.
TEST(OneRun, SummariesOfTwoRunsAreNamedByTheirOwnFiles) {
  TempDir d;
  TrainerTraceOptions b;
  b.prefetch = "none";
  fs::create_directories(d.path() / "a");
  fs::create_directories(d.path() / "b");
  write_trainer_trace(d.path() / "a" / "trace.rank0.json", TrainerTraceOptions{});
  write_trainer_trace(d.path() / "b" / "trace.rank0.json", b);
  for (const char* run_dir : {"a", "b"})
    ASSERT_EQ(run({kBin, "summarize", (d.path() / run_dir).string(), "-o", (d.path() / "s" / run_dir).string()}).rc, 0);
  fs::create_directories(d.path() / "mixed");
  fs::copy_file(d.path() / "s" / "a" / "trace.rank0.sqlite", d.path() / "mixed" / "a0.sqlite");
  fs::copy_file(d.path() / "s" / "b" / "trace.rank0.sqlite", d.path() / "mixed" / "b0.sqlite");
  auto r = run({kBin, "report", (d.path() / "mixed").string()});
  EXPECT_EQ(r.rc, 2) << r.err;
  const std::string a = (d.path() / "mixed" / "a0.sqlite").string() + " (the summary of " +
                        (d.path() / "a" / "trace.rank0.json").string() + ")";
  EXPECT_NE(r.err.find("these files are not one run: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(a), std::string::npos) << r.err;
  EXPECT_NE(r.err.find((d.path() / "mixed" / "b0.sqlite").string() + " (the summary of "), std::string::npos) << r.err;
}

// Fewer files than the world size: the missing ranks are named (a long list cut with a count), and the ranks
// given are still reported. One file alone is a look at one rank.
TEST(OneRun, MissingRanksAreNamedAndTheRestReported) {
  TempDir d;
  for (int r : {0, 1, 5})
    write(d.path() / fmt::format("rank{}.json", r), kineto_rank(r, 12, 1'700'000'000'000'000'000));
  auto r = run({kBin, "report", d.path().string()});
  EXPECT_EQ(r.rc, 0) << r.err;
  const std::string want =
      "9 of the run's 12 ranks have no file here (ranks 2, 3, 4, 6, 7, 8, 9, 10, ... (1 more) missing; world_size 12 "
      "in the traces): the report covers the 3 ranks given";
  EXPECT_NE(r.err.find("shardscope: warning: " + want), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("warning: " + want), std::string::npos) << r.out;
  auto j = run({kBin, "report", d.path().string(), "--format", "json"});
  ASSERT_EQ(j.rc, 0) << j.err;
  EXPECT_EQ(json::parse(j.out)["ranks"].size(), 3u);

  write(d.path() / "rank3.json", kineto_rank(3, 4, 1'700'000'000'000'000'000));  // now a run of 4 and one of 12
  EXPECT_EQ(run({kBin, "report", d.path().string()}).rc, 2);
  TempDir few;
  for (int r : {0, 3}) write(few.path() / fmt::format("rank{}.json", r), kineto_rank(r, 4, 1'700'000'000'000'000'000));
  auto two = run({kBin, "report", few.path().string()});
  EXPECT_NE(two.err.find("2 of the run's 4 ranks have no file here (ranks 1 and 2 missing;"), std::string::npos)
      << two.err;
  auto one = run({kBin, "report", (few.path() / "rank3.json").string()});
  EXPECT_EQ(one.rc, 0) << one.err;
  EXPECT_EQ(one.err.find("missing"), std::string::npos) << one.err;
}

// --- Report details ---

// A PyTorch-profiler trace with two ProfilerSteps: a kernel launched before the first (outside the step
// table), one in each step, a legacy NCCL kernel with no message size, and one launched after the last.
const char* kKinetoSteps = R"J({"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000, "traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 9, "tid": 9, "ts": 100, "dur": 100},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 9, "tid": 9, "ts": 200, "dur": 100},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 10, "dur": 1, "args": {"correlation": 1}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 110, "dur": 1, "args": {"correlation": 2}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 120, "dur": 1, "args": {"correlation": 3}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 210, "dur": 1, "args": {"correlation": 4}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 350, "dur": 1, "args": {"correlation": 5}},
{"ph": "X", "cat": "kernel", "name": "warmup", "pid": 0, "tid": 7, "ts": 20, "dur": 10, "args": {"stream": 7, "correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 130, "dur": 40, "args": {"stream": 7, "correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 9, "ts": 150, "dur": 40, "args": {"stream": 9, "correlation": 3}},
{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 220, "dur": 40, "args": {"stream": 7, "correlation": 4}},
{"ph": "X", "cat": "kernel", "name": "eval", "pid": 0, "tid": 7, "ts": 360, "dur": 10, "args": {"stream": 7, "correlation": 5}}
], "distributedInfo": {"rank": 0, "world_size": 1}})J";

// Every "n/a" in a text or markdown report says why: on its own line ("n/a: why"), or, for a bare "n/a"
// table cell, in a note under the table ("n/a: why (column of row)") that names the cell's row.
void expect_every_na_explained(const std::string& out) {
  std::vector<std::string> lines;
  for (size_t at = 0, nl; at < out.size(); at = nl + 1) {
    nl = out.find('\n', at);
    if (nl == std::string::npos) nl = out.size();
    lines.push_back(out.substr(at, nl - at));
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    for (size_t at = l.find("n/a"); at != std::string::npos; at = l.find("n/a", at + 3)) {
      if (l.compare(at, 5, "n/a: ") == 0 || l.compare(at, 6, "n/a in") == 0) continue;  // says why right there
      // A table cell: a later note names its row (the row's first cell).
      std::string row = l.substr(l.find_first_not_of(" |"));
      row = row.substr(0, row.find_first_of(" |"));
      bool explained = false;
      for (size_t j = i + 1; j < lines.size() && !explained; ++j)
        explained = lines[j].find("n/a") != std::string::npos && lines[j].find(": ") != std::string::npos &&
                    lines[j].find(row) != std::string::npos && lines[j].find('(') != std::string::npos;
      EXPECT_TRUE(explained) << "unexplained n/a in line: " << l << "\n" << out;
    }
    EXPECT_EQ(l.find("n/a: no communication %"), std::string::npos) << l;
  }
}

TEST(ReportDetails, NoPercentSignAfterAnNa) {
  TempDir d;
  // Compute only: no communication anywhere.
  write(
      d.path() / "k.json",
      R"J({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 10, "dur": 20, "args": {"stream": 7}}]})J");
  for (const char* format : {"text", "md", "html"}) {
    auto r = run({kBin, "report", (d.path() / "k.json").string(), "--format", format});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("overlap n/a: no communication"), std::string::npos) << format << "\n" << r.out;
    EXPECT_EQ(r.out.find("n/a: no communication %"), std::string::npos) << format << "\n" << r.out;
    EXPECT_EQ(r.out.find("n/a %"), std::string::npos) << format;
  }
  // With communication, the number keeps its sign.
  write(d.path() / "c.json", kKineto);
  auto c = run({kBin, "report", (d.path() / "c.json").string()});
  EXPECT_NE(c.out.find("overlap 50.00 % | idle"), std::string::npos) << c.out;
}

TEST(ReportDetails, NoProjectJargonInReportsOrHelp) {
  TempDir d;
  fs::path dir = two_ranks(d, "pre", "run");
  std::vector<std::vector<std::string>> commands = {{kBin, "report", dir.string()},
                                                    {kBin, "report", dir.string(), "--format", "md"},
                                                    {kBin, "report", dir.string(), "--format", "html"},
                                                    {kBin, "--help"}};
  for (const char* sub : {"report", "check-prefetch", "diff", "memory", "inspect", "launch"})
    commands.push_back({kBin, sub, "--help"});
  commands.push_back({kBin, "memory", "--params", "7.5e9", "--world", "64"});
  for (const auto& c : commands) {
    auto r = run(c);
    EXPECT_EQ(r.out.find("SPEC"), std::string::npos) << c[1] << "\n" << r.out;
  }
  auto text = run({kBin, "report", dir.string()});
  EXPECT_NE(text.out.find("legend: time ms = |W|, the step's window on the device timeline"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("exposed ms = |M| - |M ∩ C|, communication while no compute ran"), std::string::npos)
      << text.out;
}

TEST(ReportDetails, EveryNaSaysWhy) {
  TempDir d;
  write(d.path() / "k.json", kKinetoSteps);
  auto r = run({kBin, "report", (d.path() / "k.json").string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  // The legacy NCCL kernel carries no message size and no group size.
  EXPECT_NE(
      r.out.find(
          "n/a: no message size in the trace (MB (1e6 B), algbw GB/s (1e9 B/s), busbw GB/s (1e9 B/s) of send_recv)"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("n/a: the trace does not say the group size (group of send_recv)"), std::string::npos) << r.out;
  // Step 3 has no communication: its overlap % is n/a, and says so.
  EXPECT_NE(r.out.find("n/a: no communication in the step (overlap % of step 3)"), std::string::npos) << r.out;
  expect_every_na_explained(r.out);
  auto md = run({kBin, "report", (d.path() / "k.json").string(), "--format", "md"});
  expect_every_na_explained(md.out);
  auto html = run({kBin, "report", (d.path() / "k.json").string(), "--format", "html"});
  EXPECT_NE(html.out.find("<p class=\"na\">n/a: no message size in the trace (MB (1e6 B), algbw GB/s (1e9 B/s), busbw "
                          "GB/s (1e9 B/s) of send_recv)</p>"),
            std::string::npos);
  auto j = run({kBin, "report", (d.path() / "k.json").string(), "--format", "json"});
  const json c = json::parse(j.out)["ranks"][0]["collectives"][0];
  EXPECT_TRUE(c["bytes"].is_null());
  EXPECT_EQ(c["na"]["bytes"], "n/a: no message size in the trace");
  EXPECT_EQ(c["na"]["busbw_gbps"], "n/a: no message size in the trace");
  EXPECT_EQ(c["na"]["group_size"], "n/a: the trace does not say the group size");
  // The memory rows say why too.
  TempDir t;
  write_trainer_trace(t.path() / "t.json", TrainerTraceOptions{});
  auto own = run({kBin, "report", (t.path() / "t.json").string()});
  ASSERT_EQ(own.rc, 0) << own.err;
  // The allocator total has no prediction: its cell says "-", and the legend says why once.
  EXPECT_NE(own.out.find("predicted MB = the ZeRO model's peak for it from the run's config (- : not a category)"),
            std::string::npos)
      << own.out;
  auto own_json = run({kBin, "report", (t.path() / "t.json").string(), "--format", "json"});
  EXPECT_NE(own_json.out.find("n/a: the model predicts categories, not the allocator's total"), std::string::npos)
      << own_json.out;
  expect_every_na_explained(own.out);
  // And diff's.
  auto diff = run({kBin, "diff", (d.path() / "k.json").string(), (t.path() / "t.json").string()});
  ASSERT_EQ(diff.rc, 0) << diff.err;
  expect_every_na_explained(diff.out);
}

TEST(ReportDetails, LegacyTracesSayWhyTheCollectiveTableHasNoSizes) {
  const fs::path dir = fs::path(SHARDSCOPE_DATA_DIR) / "hta_trace_filter";
  ASSERT_TRUE(fs::exists(dir)) << dir << " is missing: tests/data holds it";
  auto r = run({kBin, "report", dir.string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(
      r.out.find(
          "n/a: no message size in the trace (MB (1e6 B), algbw GB/s (1e9 B/s), busbw GB/s (1e9 B/s) of send_recv, "
          "all_to_all)"),
      std::string::npos)
      << r.out;
  expect_every_na_explained(r.out);
}

TEST(ReportDetails, WholeTraceNamesTheHtaSettingItReproduces) {
  TempDir d;
  write(d.path() / "k.json", kKinetoSteps);
  auto r = run({kBin, "report", (d.path() / "k.json").string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("whole trace (as HTA's get_temporal_breakdown and get_comm_comp_overlap with "
                       "include_last_profiler_step=True: window [first, last "
                       "device event], whole µs; 1 device event left out, as HTA's step filter leaves out those whose "
                       "launch is not in the trace or "
                       "comes after the last ProfilerStep): window 0.240 ms"),
            std::string::npos)
      << r.out;
  auto j = run({kBin, "report", (d.path() / "k.json").string(), "--format", "json"});
  const json w = json::parse(j.out)["ranks"][0]["whole_trace"];
  EXPECT_NE(w["hta_setting"].get<std::string>().find("include_last_profiler_step=True"), std::string::npos);
  EXPECT_EQ(w["left_out_events"], 1);
}

TEST(ReportDetails, DeviceEventsOutsideTheStepTableAreCountedAndSaid) {
  TempDir d;
  write(d.path() / "k.json", kKinetoSteps);
  for (const char* format : {"text", "md", "html"}) {
    auto r = run({kBin, "report", (d.path() / "k.json").string(), "--format", format});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("1 device event (0.010 ms busy) before step 2 and 1 device event (0.010 ms busy) after step 3 "
                         "are outside the step table"),
              std::string::npos)
        << format << "\n"
        << r.out;
  }
  auto j = run({kBin, "report", (d.path() / "k.json").string(), "--format", "json"});
  const json o = json::parse(j.out)["ranks"][0]["outside_steps"];
  EXPECT_EQ(o["first_step"], 2);
  EXPECT_EQ(o["before_first_step"]["device_events"], 1);
  EXPECT_EQ(o["before_first_step"]["busy_ns"], 10'000);
  EXPECT_EQ(o["after_last_step"]["device_events"], 1);
  // The trainer's steps cover all its device work: nothing is said.
  TempDir t;
  write_trainer_trace(t.path() / "t.json", TrainerTraceOptions{});
  auto own = run({kBin, "report", (t.path() / "t.json").string()});
  EXPECT_EQ(own.out.find("outside the step table"), std::string::npos) << own.out;
}

}  // namespace

namespace {

// Two ranks of a PyTorch profiler run whose record_param_comms carry "Seq" and "Process Group Name": rank 1's
// trace starts one all-gather late (it holds Seq 1 and 2, rank 0 holds 0, 1 and 2), and rank 1 starts each
// shared all-gather 3 µs after rank 0 (both clocks are the same base). The report pairs by sequence number
// and says so; rank 1 is last at both shared instances, 3 µs late.
std::string seq_rank(int rank, std::vector<int> seqs) {
  std::string ev;
  for (int seq : seqs) {
    const int ts = 100 * seq + (rank == 1 ? 3 : 0);
    ev += fmt::format(
        R"({{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": {}, "dur": 1, "args": {{"External id": {}, "Seq": {}, )"
        R"("Process Group Name": "0", "Collective name": "_allgather_base", "Out msg nelems": 1000, "Group size": 2, "dtype": "Float"}}}},)",
        ts, 10 + seq, seq);
    ev += fmt::format(
        R"J({{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic(x)", "pid": 0, "tid": 7, "ts": {}, "dur": 20, "args": {{"stream": 7, "External id": {}}}}},)J",
        ts + 1, 10 + seq);
  }
  ev.pop_back();
  return fmt::format(R"({{"distributedInfo": {{"rank": {}, "world_size": 2}}, "traceEvents": [{}]}})", rank, ev);
}

// --- Steps without a schedule ---

// A plain torch.profiler.profile() capture: no ProfilerStep#, two optimizer steps, a "forward" range before
// each, and work after the last optimizer step.
const char* kKinetoNoSchedule = R"J({"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000, "traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 9, "tid": 9, "ts": 100, "dur": 50},
{"ph": "X", "cat": "cpu_op", "name": "Optimizer.step#AdamW.step", "pid": 9, "tid": 9, "ts": 160, "dur": 20},
{"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 9, "tid": 9, "ts": 200, "dur": 50},
{"ph": "X", "cat": "cpu_op", "name": "Optimizer.step#AdamW.step", "pid": 9, "tid": 9, "ts": 260, "dur": 20},
{"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 9, "tid": 9, "ts": 300, "dur": 20},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 110, "dur": 1, "args": {"correlation": 1}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 165, "dur": 1, "args": {"correlation": 2}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 210, "dur": 1, "args": {"correlation": 3}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 265, "dur": 1, "args": {"correlation": 4}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 305, "dur": 1, "args": {"correlation": 5}},
{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 115, "dur": 30, "args": {"stream": 7, "correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "adam", "pid": 0, "tid": 7, "ts": 170, "dur": 10, "args": {"stream": 7, "correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 215, "dur": 30, "args": {"stream": 7, "correlation": 3}},
{"ph": "X", "cat": "kernel", "name": "adam", "pid": 0, "tid": 7, "ts": 270, "dur": 10, "args": {"stream": 7, "correlation": 4}},
{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 310, "dur": 10, "args": {"stream": 7, "correlation": 5}}
], "distributedInfo": {"rank": 0, "world_size": 1}})J";

// Each step's window on the device (ns) and the rule the JSON report names.
std::pair<std::vector<int64_t>, std::string> steps_of(const std::vector<std::string>& args) {
  auto r = run(args);
  EXPECT_EQ(r.rc, 0) << r.err;
  const json rank = json::parse(r.out)["ranks"][0];
  std::vector<int64_t> windows;
  for (const json& s : rank["steps"]) windows.push_back(s["step_ns"].get<int64_t>());
  return {windows, rank["steps_made_by"].get<std::string>()};
}

TEST(StepsWithoutASchedule, EachOptimizerStepEndsAStep) {
  TempDir d;
  const std::string f = (d.path() / "k.json").string();
  write(f, kKinetoNoSchedule);
  // Step 0 from the first host event to the first optimizer step's end, step 1 to the second's; the last
  // forward is after the last step. On the device: from a step's first kernel to the next step's first.
  auto [windows, rule] = steps_of({kBin, "report", f, "--format", "json"});
  EXPECT_EQ(windows, (std::vector<int64_t>{100'000, 65'000}));
  EXPECT_EQ(rule, "optimizer_step");
  auto text = run({kBin, "report", f});
  EXPECT_NE(text.out.find("steps made by: inferred from the optimizer (the trace marks no steps)"), std::string::npos)
      << text.out;
  // A trace's own schedule is not announced, but named in the JSON.
  write(d.path() / "p.json", kKinetoSteps);
  auto own = run({kBin, "report", (d.path() / "p.json").string()});
  EXPECT_EQ(own.out.find("steps made by"), std::string::npos) << own.out;
  EXPECT_EQ(steps_of({kBin, "report", (d.path() / "p.json").string(), "--format", "json"}).second, "profiler_step");
}

TEST(StepsWithoutASchedule, AStepMarkerStartsAStepAtEachRangeOfThatName) {
  TempDir d;
  const std::string f = (d.path() / "k.json").string();
  write(f, kKinetoNoSchedule);
  // Steps start at 100, 200 and 300 µs; the last runs to the last host event's end (320).
  auto [windows, rule] = steps_of({kBin, "report", f, "--format", "json", "--step-marker", "forward"});
  EXPECT_EQ(windows, (std::vector<int64_t>{100'000, 95'000, 10'000}));
  EXPECT_EQ(rule, "step_marker");
  auto text = run({kBin, "report", f, "--step-marker", "forward"});
  EXPECT_NE(text.out.find("steps made by: --step-marker"), std::string::npos) << text.out;
  // An exact name: a prefix marks nothing, and then no other rule steps in.
  EXPECT_TRUE(steps_of({kBin, "report", f, "--format", "json", "--step-marker", "forw"}).first.empty());
  // Every command that takes --step-pattern takes it; the two together are refused.
  EXPECT_EQ(run({kBin, "diff", f, f, "--step-marker", "forward"}).rc, 0);
  TempDir out;
  EXPECT_EQ(run({kBin, "summarize", f, "-o", out.path().string(), "--step-marker", "forward"}).rc, 0);
  auto both = run({kBin, "report", f, "--step-marker", "forward", "--step-pattern", "x"});
  EXPECT_NE(both.rc, 0);
  EXPECT_NE(both.err.find("--step-marker"), std::string::npos) << both.err;
}

// A capture with neither a schedule nor an optimizer step: each collective (kind, elements) launched at its
// time (µs) on the host, its kernel 5 µs later for 10 µs; a last host range to 750 µs.
std::string kineto_collectives(const std::vector<std::tuple<const char*, int, int>>& colls) {
  std::string ev;
  int corr = 0;
  for (const auto& [kind, nelems, at] : colls) {
    ++corr;
    const bool ag = std::string_view(kind) == "ag";
    ev += fmt::format(
        R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": {}, "dur": 1, "args": {{"correlation": {}}}}},)",
        at, corr);
    ev += fmt::format(
        R"J({{"ph": "X", "cat": "kernel", "name": "{}", "pid": 0, "tid": 7, "ts": {}, "dur": 10, "args": {{"stream": 7, "correlation": {}, )J"
        R"("Collective name": "{}", "In msg nelems": {}, "Out msg nelems": {}, "Group size": 2, "dtype": "Float"}}}},)",
        ag ? "ncclDevKernel_AllGather_RING_LL(x)" : "ncclDevKernel_ReduceScatter_RING_LL_Sum_float(x)", at + 5, corr,
        ag ? "_allgather_base" : "_reduce_scatter_base", ag ? nelems / 2 : nelems, ag ? nelems : nelems / 2);
  }
  ev += R"({"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 9, "tid": 9, "ts": 700, "dur": 50})";
  return R"({"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 2}, "traceEvents": [)" + ev + "]}";
}

TEST(StepsWithoutASchedule, TheCollectivesRepeatingPatternStartsAStepAtEachRepetition) {
  TempDir d;
  const std::string f = (d.path() / "k.json").string();
  // The capture opens inside a step (its reduce-scatter at 100), then three steps of two all-gathers and a
  // reduce-scatter each, from 200, 400 and 600 µs: the period is 3, and a repetition begins at the run of
  // all-gathers, not at the trace's first collective.
  write(f, kineto_collectives({{"rs", 2048, 100},
                               {"ag", 1024, 200},
                               {"ag", 1024, 220},
                               {"rs", 2048, 260},
                               {"ag", 1024, 400},
                               {"ag", 1024, 420},
                               {"rs", 2048, 460},
                               {"ag", 1024, 600},
                               {"ag", 1024, 620},
                               {"rs", 2048, 660}}));
  // Host steps [200, 400), [400, 600), [600, 750); on the device each from its first kernel (205, 405, 605 µs)
  // to the next's, the last to its last kernel's end (675 µs).
  auto [windows, rule] = steps_of({kBin, "report", f, "--format", "json"});
  EXPECT_EQ(windows, (std::vector<int64_t>{200'000, 200'000, 70'000}));
  EXPECT_EQ(rule, "repeating_collectives");
  auto text = run({kBin, "report", f});
  EXPECT_NE(text.out.find("steps made by: inferred from the collectives"), std::string::npos) << text.out;
}

TEST(ReportCli, TheTopDeviceTableNamesTheCollectiveOfEachCommunicationKernel) {
  TempDir d;
  const std::string f = (d.path() / "k.json").string();
  write(f, kineto_collectives({{"ag", 1024, 200}, {"ag", 1024, 220}, {"rs", 2048, 260}}));
  auto text = run({kBin, "report", f});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_TRUE(std::regex_search(
      text.out, std::regex(R"(ncclDevKernel_AllGather_RING_LL\(x\) +communication \(all_gather\) +2 )")))
      << text.out;
  EXPECT_TRUE(std::regex_search(text.out, std::regex(R"(ReduceScatter\S* +communication \(reduce_scatter\) +1 )")))
      << text.out;
  const json top = json::parse(run({kBin, "report", f, "--format", "json"}).out)["ranks"][0]["top_device"];
  ASSERT_EQ(top.size(), 2u) << top;
  EXPECT_EQ(top[0]["kind"], "all_gather");  // 20 µs, before the reduce-scatter's 10
  EXPECT_EQ(top[1]["kind"], "reduce_scatter");
}

TEST(StepsWithoutASchedule, CollectivesThatDoNotRepeatMakeNoStepsAndTheReportSaysHowToMarkThem) {
  TempDir d;
  const std::string f = (d.path() / "k.json").string();
  // Sizes differ every time: no period repeats twice.
  write(f, kineto_collectives({{"ag", 1024, 200}, {"ag", 2048, 220}, {"rs", 2048, 260}, {"ag", 4096, 400}}));
  auto [windows, rule] = steps_of({kBin, "report", f, "--format", "json"});
  EXPECT_TRUE(windows.empty());
  EXPECT_EQ(rule, "none");
  auto text = run({kBin, "report", f});
  EXPECT_NE(text.out.find("no steps (no ProfilerStep#N, trainer \"step\", Optimizer.step or repeating collectives; "
                          "--step-marker NAME starts a step at each range NAME)"),
            std::string::npos)
      << text.out;
  // One collective repeated once is not yet a pattern (two of a period of 1 is, but a lone one is not).
  write(f, kineto_collectives({{"ag", 1024, 200}}));
  EXPECT_TRUE(steps_of({kBin, "report", f, "--format", "json"}).first.empty());
}

}  // namespace

TEST(ReportCli, CollectiveInstancesPairBySequenceNumberWhereTheTraceHasOne) {
  TempDir d;
  std::ofstream(d.path() / "rank0.json") << seq_rank(0, {0, 1, 2});
  std::ofstream(d.path() / "rank1.json") << seq_rank(1, {1, 2});
  shardscope::test::RunResult r = run({SHARDSCOPE_BIN, "report", d.path().string(), "--format", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& s = j.at("stragglers");
  EXPECT_EQ(s.at("pairing"), "sequence");
  ASSERT_EQ(s.at("instances").size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(s["instances"][i]["ordinal"], i + 1);
    EXPECT_EQ(s["instances"][i]["by_seq"], true);
    EXPECT_EQ(s["instances"][i]["last_rank"], 1);
    EXPECT_EQ(s["instances"][i]["late_by_ns"], 3000);
  }
  shardscope::test::RunResult text = run({SHARDSCOPE_BIN, "report", d.path().string(), "--ranks", "all"});
  EXPECT_NE(text.out.find("2 collective instances matched across ranks by process group and sequence number"),
            std::string::npos)
      << text.out;
}
