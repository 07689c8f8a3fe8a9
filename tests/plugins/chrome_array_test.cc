// The Chrome trace's JSON Array Format (a bare array of events, as PyTorch's legacy profiler writes it): read by
// the Kineto importer with its string pids as processes, and a CPU-only rank's Gloo ranges as communication.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "plugins/load/load.h"
#include "tests/plugins/nsys_support.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"
#include "tracer/format/error.h"

namespace fs = std::filesystem;
using namespace shardscope;
using model::CollectiveKind;
using model::IntervalClass;

namespace {

void write(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

plugins::LoadResult load_text(const test::TempDir& d, const std::string& text, const std::string& name = "t.json") {
  write(d.path() / name, text);
  return plugins::load({d.path() / name});
}

const model::Track* track_named(const model::Rank& r, int64_t tid) {
  for (const model::Track& t : r.tracks)
    if (t.tid == tid) return &t;
  return nullptr;
}

// The legacy profiler's shape: "CPU functions" on the main thread and Gloo's worker thread, one step.
const std::string kLegacy = R"J([
  {"name": "ProfilerStep#0", "ph": "X", "ts": 100, "dur": 900, "tid": 1, "pid": "CPU functions", "args": {}},
  {"name": "c10d::allreduce_", "ph": "X", "ts": 200, "dur": 10, "tid": 1, "pid": "CPU functions", "args": {}},
  {"name": "gloo:all_reduce", "ph": "X", "ts": 210, "dur": 300, "tid": 2, "pid": "CPU functions", "args": {}},
  {"name": "gloo:broadcast", "ph": "X", "ts": 600, "dur": 50, "tid": 2, "pid": "CPU functions", "args": {}},
  {"name": "aten::add_", "ph": "X", "ts": 700, "dur": 5, "tid": 1, "pid": "other", "args": {}},
  {"name": "aten::mul", "ph": "X", "ts": 800, "dur": 5, "tid": 1, "pid": 42, "args": {}}
])J";

TEST(ChromeArray, BareArrayReadsEventsThreadsAndStringPids) {
  test::TempDir d;
  plugins::LoadResult r = load_text(d, kLegacy);
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  const model::Rank& rank = r.trace.ranks[0];
  EXPECT_EQ(rank.format, "kineto");
  EXPECT_EQ(rank.event_count(), 6u);
  EXPECT_TRUE(rank.clock_sync.empty()) << "times from the profiler's start are not on the wall clock";
  EXPECT_EQ(rank.metadata.value("chrome_trace_form", ""), "JSON Array Format");
  ASSERT_EQ(rank.steps.size(), 1u);
  EXPECT_EQ(rank.steps[0].host_start_ns, 100000);
  EXPECT_EQ(rank.steps[0].host_end_ns, 1000000);

  // Equal strings, equal pid: "CPU functions" is one process with two threads; "other" another; 42 stays 42.
  std::map<std::string, std::set<std::pair<int64_t, int64_t>>> by_process;
  for (const model::Track& t : rank.tracks) by_process[t.name.substr(0, t.name.find(" / "))].insert({t.pid, t.tid});
  ASSERT_EQ(by_process["CPU functions"].size(), 2u);
  const int64_t cpu = by_process["CPU functions"].begin()->first;
  EXPECT_EQ(std::prev(by_process["CPU functions"].end())->first, cpu);
  ASSERT_EQ(by_process["other"].size(), 1u);
  EXPECT_NE(by_process["other"].begin()->first, cpu);
  EXPECT_GE(cpu, int64_t(1) << 30);  // past any real pid
  EXPECT_EQ(by_process["thread 1"], (std::set<std::pair<int64_t, int64_t>>{{42, 1}}));
  // The number is the string's own, whatever came first: the same process in another rank's file.
  plugins::LoadResult other =
      load_text(d, R"J([{"name": "x", "ph": "X", "ts": 1, "dur": 1, "tid": 5, "pid": "other", "args": {}},
             {"name": "y", "ph": "X", "ts": 2, "dur": 1, "tid": 1, "pid": "CPU functions", "args": {}}])J",
                "other.json");
  const model::Track* main_thread = track_named(other.trace.ranks.at(0), 1);
  ASSERT_NE(main_thread, nullptr);
  EXPECT_EQ(main_thread->pid, cpu);

  // Gloo's ranges are the collectives' execution: communication, on a communication track.
  const model::Track* gloo = track_named(rank, 2);
  ASSERT_NE(gloo, nullptr);
  EXPECT_EQ(gloo->kind, model::TrackKind::Communication);
  EXPECT_EQ(gloo->name, "CPU functions / thread 2");
  ASSERT_EQ(gloo->events.size(), 2u);
  EXPECT_EQ(gloo->events[0].cls, IntervalClass::Communication);
  EXPECT_EQ(gloo->events[0].coll, CollectiveKind::AllReduce);
  EXPECT_EQ(gloo->events[0].ts_ns, 210000);
  EXPECT_EQ(gloo->events[0].dur_ns, 300000);
  EXPECT_EQ(gloo->events[1].coll, CollectiveKind::Broadcast);
  // The c10d op that queued it is host work, as a kernel's launch is.
  for (const model::Track& t : rank.tracks)
    for (const model::Event& e : t.events)
      if (rank.str(e.name) == "c10d::allreduce_") {
        EXPECT_EQ(e.cls, IntervalClass::Host);
      }
}

TEST(ChromeArray, TheObjectFormIsUnchanged) {
  // In the object form a string pid is still one of Kineto's own non-process rows ("Spans"), skipped; and a
  // rank with GPU kernels keeps its Gloo ranges as host work (the kernels are its communication).
  test::TempDir d;
  plugins::LoadResult r = load_text(d, R"J({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 0, "tid": 7, "ts": 10, "dur": 5, "args": {"stream": 7}},
    {"ph": "X", "cat": "cpu_op", "name": "gloo:all_reduce", "pid": 5, "tid": 2, "ts": 10, "dur": 5},
    {"ph": "X", "cat": "cpu_op", "name": "span", "pid": "Spans", "tid": 2, "ts": 10, "dur": 5}]})J");
  const model::Rank& rank = r.trace.ranks.at(0);
  EXPECT_EQ(rank.event_count(), 2u);
  EXPECT_FALSE(rank.clock_sync.empty());
  const model::Track* host = track_named(rank, 2);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->kind, model::TrackKind::HostThread);
  EXPECT_EQ(host->events.at(0).cls, IntervalClass::Host);
}

TEST(ChromeArray, CutAndMalformedArrays) {
  test::TempDir d;
  // Cut inside its third event (the format allows the missing ']'): the two before it, with a warning.
  std::string cut = kLegacy.substr(0, kLegacy.find("gloo:broadcast") + 5);
  plugins::LoadResult r = load_text(d, cut, "cut.json");
  ASSERT_EQ(r.trace.ranks.size(), 1u);
  EXPECT_TRUE(r.trace.ranks[0].truncated);
  EXPECT_EQ(r.trace.ranks[0].event_count(), 3u);
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_NE(r.warnings[1].find("file cut off at byte"), std::string::npos) << r.warnings[1];
  // A value that is no event, where an event should be.
  try {
    load_text(d, R"J([{"name": "a", "ph": "X", "ts": 1, "dur": 1, "tid": 1, "pid": "p"}, 5])J", "five.json");
    FAIL() << "no error";
  } catch (const trace::TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("array[1] is not an object"), std::string::npos) << e.what();
    EXPECT_EQ(e.offset(), 68u);
  }
  // An array that does not start with an event is no format shardscope knows.
  EXPECT_THROW(load_text(d, "[1, 2, 3]", "numbers.json"), trace::TraceError);
}

// The real capture (tests/data/torch113_ddp_gloo): PyTorch 1.13's legacy profiler, DDP over Gloo, 2 ranks.
const fs::path kCapture = fs::path(SHARDSCOPE_DATA_DIR) / "torch113_ddp_gloo";

// What the file itself holds, counted from its JSON: per step number, Gloo's ranges of each kind that start in
// the step's ProfilerStep range; and per kind in the whole file.
struct FileCounts {
  std::map<int64_t, std::map<std::string, int>> by_step;
  std::map<std::string, int> total;
  nlohmann::json events;
};
FileCounts count_gloo(const nlohmann::json& events) {
  FileCounts c;
  c.events = events;
  std::map<int64_t, std::pair<double, double>> steps;
  for (const auto& e : events)
    if (std::string n = e["name"]; n.starts_with("ProfilerStep#"))
      steps[std::stoll(n.substr(13))] = {e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()};
  for (const auto& e : events) {
    std::string n = e["name"];
    if (!n.starts_with("gloo:")) continue;
    ++c.total[n.substr(5)];
    for (const auto& [number, range] : steps)
      if (e["ts"].get<double>() >= range.first && e["ts"].get<double>() < range.second)
        ++c.by_step[number][n.substr(5)];
  }
  return c;
}

// Within [lo, hi): the time covered by the file's ATen ops off Gloo's threads (the CPU's compute), and by
// its Gloo ranges (the communication), and by both at once; in ns from the file's µs.
struct Covered {
  int64_t compute = 0, comm = 0, both = 0;
};
Covered covered(const nlohmann::json& events, int64_t lo, int64_t hi) {
  std::set<int64_t> gloo_tids;
  for (const auto& e : events)
    if (e["name"].get<std::string>().starts_with("gloo:")) gloo_tids.insert(e["tid"].get<int64_t>());
  // A ns-resolution sweep is 1e8 points here; µs edges are enough, since every time is whole µs.
  std::map<int64_t, std::pair<int, int>> edges;  // µs → (compute depth change, comm depth change)
  for (const auto& e : events) {
    if (e["ph"] != "X") continue;
    const std::string n = e["name"];
    const int64_t tid = e["tid"], ts = int64_t(e["ts"].get<double>()), dur = int64_t(e["dur"].get<double>());
    const bool comm = n.starts_with("gloo:"), compute = n.starts_with("aten::") && !gloo_tids.contains(tid);
    if (!comm && !compute) continue;
    auto& [c0, m0] = edges[ts];
    (comm ? m0 : c0) += 1;
    auto& [c1, m1] = edges[ts + dur];
    (comm ? m1 : c1) -= 1;
  }
  Covered out;
  int c = 0, m = 0;
  int64_t at = 0;
  for (const auto& [us, d] : edges) {
    const int64_t from = std::max(at * 1000, lo), to = std::min(us * 1000, hi);
    if (to > from) {
      if (c > 0) out.compute += to - from;
      if (m > 0) out.comm += to - from;
      if (c > 0 && m > 0) out.both += to - from;
    }
    c += d.first, m += d.second, at = us;
  }
  return out;
}

TEST(ChromeArray, RealLegacyProfilerCaptureReports) {
  test::RunResult r = test::run({SHARDSCOPE_BIN, "report", kCapture.string(), "--format", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["ranks"].size(), 2u);
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE(rank);
    FileCounts file = count_gloo(test::read_gz_json(kCapture / ("trace.rank" + std::to_string(rank) + ".json.gz")));
    ASSERT_EQ(file.total.size(), 2u);  // all_reduce and broadcast
    const nlohmann::json& rj = j["ranks"][rank];
    EXPECT_EQ(rj["rank"], rank);
    std::map<std::string, int> counted;
    for (const auto& c : rj["collectives"]) counted[c["kind"].get<std::string>()] = c["count"].get<int>();
    EXPECT_EQ(counted, file.total);
    ASSERT_EQ(rj["steps"].size(), 4u);
    EXPECT_GT(rj["all_steps"]["comm_ns"].get<int64_t>(), 0);
    // HTA's breakdown counts GPU kernels: there are none.
    EXPECT_TRUE(rj["whole_trace"].is_null()) << rj["whole_trace"].dump();
    EXPECT_NE(rj["na"].value("whole_trace", "").find("no device events"), std::string::npos) << rj["na"].dump();
    for (size_t i = 0; i < rj["steps"].size(); ++i) {
      const nlohmann::json& s = rj["steps"][i];
      const int64_t step = s["step"];
      SCOPED_TRACE(step);
      EXPECT_EQ(step, int64_t(i));  // 0 (the warm-up) to 3
      // Every step of this run all-reduces its gradients: its Gloo work is communication time in it.
      ASSERT_GT(file.by_step[step]["all_reduce"], 0);
      EXPECT_GT(s["comm_ns"].get<int64_t>(), 0);
      if (step > 0) {
        EXPECT_GT(s["comm_fraction_pct"].get<double>(), 0.0);
      }
      // The CPU's compute (its ATen ops) and what of the communication ran under it, worked out from the file.
      const int64_t lo = s["start_ns"], hi = lo + s["step_ns"].get<int64_t>();
      const Covered want = covered(file.events, lo, hi);
      EXPECT_GT(want.compute, 0);
      EXPECT_EQ(s["compute_ns"].get<int64_t>(), want.compute);
      EXPECT_EQ(s["comm_ns"].get<int64_t>(), want.comm);
      EXPECT_EQ(s["overlap_ns"].get<int64_t>(), want.both);
    }
  }
  EXPECT_EQ(j["summary"]["comm_pct"]["ranks"], 2) << j["summary"].dump();
}

// `inspect` reads the capture as `report` does: its rank, its steps, and no world size to claim.
TEST(ChromeArray, InspectSaysWhatTheCaptureIs) {
  const std::string file = (kCapture / "trace.rank0.json.gz").string();
  test::RunResult r = test::run({SHARDSCOPE_BIN, "inspect", file});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(
      r.out.find("rank 0 (the world size is not recorded) (kineto): {\"chrome_trace_form\":\"JSON Array Format\"}"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("4 steps"), std::string::npos) << r.out;
}

}  // namespace
