// The shardscope CLI as a user runs it: a real process, its exit code and what it prints.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

namespace shardscope::test {
namespace {

using json = nlohmann::json;

TEST(Cli, HelpVersionAndWrongFlags) {
  RunResult help = run({SHARDSCOPE_BIN, "--help"});
  EXPECT_EQ(help.rc, 0);
  EXPECT_NE(help.out.find("inspect"), std::string::npos);
  RunResult version = run({SHARDSCOPE_BIN, "--version"});
  EXPECT_EQ(version.rc, 0);
  EXPECT_NE(version.out.find("shardscope 0."), std::string::npos);
  RunResult none = run({SHARDSCOPE_BIN});
  EXPECT_EQ(none.rc, 2);
  RunResult bad = run({SHARDSCOPE_BIN, "inspect", "--frobnicate", "x.json"});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--frobnicate"), std::string::npos) << bad.err;
  RunResult badfmt = run({SHARDSCOPE_BIN, "inspect", "--format", "xml", "x.json"});
  EXPECT_EQ(badfmt.rc, 2);
  EXPECT_NE(badfmt.err.find("xml"), std::string::npos) << badfmt.err;
}

TEST(Cli, InspectsFilesTheTracerWrote) {
  TempDir dir;
  auto trace = dir.path() / "rank1.json.gz";
  RunResult demo = run({HOST_DEMO_BIN, "--rank", "1", "--world-size", "2", "--steps", "2", "--out", trace.string()});
  ASSERT_EQ(demo.rc, 0) << demo.err;

  RunResult text = run({SHARDSCOPE_BIN, "inspect", trace.string()});
  EXPECT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("rank        1 of 2"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("compute"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("comm (copy thread)"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("TRUNCATED"), std::string::npos);

  RunResult js = run({SHARDSCOPE_BIN, "inspect", "--format", "json", trace.string()});
  ASSERT_EQ(js.rc, 0) << js.err;
  json j = json::parse(js.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["shardscope"]["rank"], 1);
  EXPECT_EQ(j[0]["gzip"], true);
  EXPECT_GT(j[0]["span_ns"]["duration"].get<int64_t>(), 0);
  uint64_t compute_events = 0, comm_events = 0;
  for (const json& t : j[0]["tracks"]) {
    if (t["name"] == "compute") compute_events = t["events"];
    if (t["name"] == "comm (copy thread)") comm_events = t["events"];
  }
  EXPECT_EQ(compute_events, 2u * (1 + 4 + 4 + 1));  // step, 4 unit ranges, 4 counters, 1 instant per step
  EXPECT_EQ(comm_events, 2u);
  EXPECT_EQ(j[0]["counters"]["memory.activations"], 8);
}

TEST(Cli, BadFilesNameFileAndByteAndExit2) {
  TempDir dir;
  auto empty = dir.path() / "empty.json", garbage = dir.path() / "garbage.json", headless = dir.path() / "h.json";
  write_file(empty, "");
  write_file(garbage, "{\"shardscope\": nope}");
  write_file(headless, R"({"shardscope_x": 1, "events": 3})");
  auto missing = dir.path() / "missing.json";
  for (auto [path, expect] : std::vector<std::pair<std::filesystem::path, std::string>>{
           {empty, "at byte 0: empty file"},
           {garbage, "at byte 16: parse error"},  // "n" could start null; "o" cannot
           {headless, "at byte 32: no \"traceEvents\" array"},
           {missing, "at byte 0: cannot open"}}) {
    RunResult r = run({SHARDSCOPE_BIN, "inspect", path.string()});
    EXPECT_EQ(r.rc, 2) << path;
    EXPECT_NE(r.err.find(path.string() + ": " + expect), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("terminate"), std::string::npos);
  }
}

// Every format `report` reads, `inspect` reads too, each rank as the loader makes it: Kineto JSON (gzip'd,
// and the legacy profiler's bare array), an Nsight Systems export.
TEST(Cli, InspectReadsWhatReportReads) {
  const std::string data = std::string(SHARDSCOPE_SOURCE_DIR) + "/tests/data/";
  RunResult kineto = run({SHARDSCOPE_BIN, "inspect", data + "h100_nccl2/pytorch_fsdp1_backward_pre/rank0.json.gz"});
  EXPECT_EQ(kineto.rc, 0) << kineto.err;
  EXPECT_NE(kineto.out.find("rank 0 of 2 (kineto)"), std::string::npos) << kineto.out;
  EXPECT_NE(kineto.out.find("3 steps"), std::string::npos) << kineto.out;
  RunResult bare = run({SHARDSCOPE_BIN, "inspect", data + "torch113_ddp_gloo/trace.rank1.json.gz"});
  EXPECT_EQ(bare.rc, 0) << bare.err;
  // One process's export says no world size: not "of 0".
  EXPECT_NE(bare.out.find("rank 0 (the world size is not recorded) (kineto)"), std::string::npos) << bare.out;
  EXPECT_EQ(bare.out.find(" of 0"), std::string::npos) << bare.out;
  RunResult nsys = run({SHARDSCOPE_BIN, "inspect", "--format", "json", data + "nsys_2gpu/h100_2gpu_1s.sqlite.gz"});
  ASSERT_EQ(nsys.rc, 0) << nsys.err;
  json j = json::parse(nsys.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["format"], "nsys");
  EXPECT_GT(j[1]["events"].get<int64_t>(), 0);
}

// Nsight's own report is named for what it is, with the export command, named one by one or alone in a folder.
TEST(Cli, AnNsightReportGetsTheExportCommand) {
  TempDir dir;
  auto rep = dir.path() / "run.nsys-rep";
  write_file(rep, std::string("\x00\x01binary", 8));
  const std::string hint =
      "an Nsight Systems report; shardscope reads its SQLite export: nsys export --type sqlite "
      "--output " +
      (dir.path() / "run").string() + ".sqlite " + rep.string();
  for (const char* command : {"inspect", "report"}) {
    RunResult named = run({SHARDSCOPE_BIN, command, rep.string()});
    EXPECT_EQ(named.rc, 2) << command;
    EXPECT_NE(named.err.find(hint), std::string::npos) << named.err;
  }
  RunResult folder = run({SHARDSCOPE_BIN, "report", dir.path().string()});
  EXPECT_EQ(folder.rc, 2);
  EXPECT_NE(folder.err.find("no trace files in this directory; run.nsys-rep is " + hint), std::string::npos)
      << folder.err;
}

// -o on every command that prints a result: the file holds what stdout would, and stdout stays empty.
TEST(Cli, EveryPrintingCommandWritesToOutput) {
  TempDir dir;
  const std::string trace = std::string(SHARDSCOPE_SOURCE_DIR) + "/tests/data/h100_nccl2/pytorch_fsdp1_backward_pre";
  const std::vector<std::vector<std::string>> commands = {{"inspect", trace + "/rank0.json.gz"},
                                                          {"check-prefetch", trace},
                                                          {"diff", trace, trace},
                                                          {"memory", "--params", "7e9", "--world", "8"},
                                                          {"report", trace + "/rank0.json.gz"}};
  for (const auto& c : commands) {
    std::vector<std::string> plain = {SHARDSCOPE_BIN, "-q"}, to_file = {SHARDSCOPE_BIN};
    plain.insert(plain.end(), c.begin(), c.end());
    to_file.insert(to_file.end(), c.begin(), c.end());
    const auto file = dir.path() / (c[0] + ".out");
    to_file.insert(to_file.end(), {"-o", file.string()});
    plain.erase(plain.begin() + 1);
    RunResult a = run(plain), b = run(to_file);
    EXPECT_EQ(a.rc, b.rc) << c[0] << ": " << b.err;
    ASSERT_FALSE(a.out.empty()) << c[0] << ": " << a.err;
    EXPECT_TRUE(b.out.empty()) << c[0];
    std::ifstream in(file, std::ios::binary);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), a.out) << c[0];
  }
}

// No command writes its result over one of its inputs, named or inside a folder it reads.
TEST(Cli, NoCommandWritesOverItsInput) {
  TempDir dir;
  const auto trace = dir.path() / "rank0.json.gz";
  std::filesystem::copy_file(
      std::string(SHARDSCOPE_SOURCE_DIR) + "/tests/data/h100_nccl2/pytorch_fsdp1_backward_pre/rank0.json.gz", trace);
  const auto size = std::filesystem::file_size(trace);
  const std::string t = trace.string(), d = dir.path().string();
  for (const std::vector<std::string>& c :
       std::vector<std::vector<std::string>>{{"inspect", t}, {"check-prefetch", d}, {"diff", t, d}, {"report", d}}) {
    std::vector<std::string> args = {SHARDSCOPE_BIN};
    args.insert(args.end(), c.begin(), c.end());
    args.insert(args.end(), {"-o", t});
    RunResult r = run(args);
    EXPECT_EQ(r.rc, 2) << c[0];
    EXPECT_NE(r.err.find("refusing to write " + t + " over the input"), std::string::npos) << c[0] << ": " << r.err;
    EXPECT_EQ(std::filesystem::file_size(trace), size) << c[0];
  }
}

TEST(Cli, TruncatedFileLoadsWithWarning) {
  TempDir dir;
  auto trace = dir.path() / "t.json";
  ASSERT_EQ(run({HOST_DEMO_BIN, "--steps", "1", "--out", trace.string()}).rc, 0);
  std::ifstream in(trace);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t cut = text.size() - 30;
  write_file(trace, text.substr(0, cut));
  RunResult r = run({SHARDSCOPE_BIN, "inspect", trace.string()});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("warning: " + trace.string() + ": file cut off at byte " + std::to_string(cut)),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("TRUNCATED   at byte " + std::to_string(cut)), std::string::npos) << r.out;
}

}  // namespace
}  // namespace shardscope::test
