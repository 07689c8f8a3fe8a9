// Hostile traces (issue #15): each ends in one line naming the file (and byte), exit 2, quickly, never a
// crash, a hang or a bare bad_alloc. The inputs are made here, in a temp dir: gzip bombs with zlib, deep
// nesting with loops, so the repository stays small.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <zlib.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/run.h"
#include "tests/support/temp_dir.h"
#include "tracer/format/limits.h"

namespace shardscope::test {
namespace {

namespace fs = std::filesystem;
const std::string kHeader = R"({"shardscope":{"schema_version":1,"rank":0,"world_size":1)";

// One gzip member of `text`.
std::string gzip(const std::string& text) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, uLong(text.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = uInt(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = uInt(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// The error: exit 2, one line, naming the file and containing `what`, within `seconds`.
void expect_refused(const std::vector<std::string>& args, const std::string& file, const std::string& what,
                    double seconds = 5) {
  std::vector<std::string> a = {"/usr/bin/timeout", "-s", "KILL", "20", SHARDSCOPE_BIN};
  a.insert(a.end(), args.begin(), args.end());
  auto t0 = std::chrono::steady_clock::now();
  RunResult r = run(a);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  SCOPED_TRACE(args[0] + " " + file);
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("shardscope: error: " + file), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  EXPECT_LT(r.err.size(), 600u);
  EXPECT_LT(s, seconds);
}

void expect_refused_everywhere(const std::string& file, const std::string& what) {
  for (std::vector<std::string> args : {std::vector<std::string>{"inspect", file},
                                        {"report", file},
                                        {"report", "--format", "html", file},
                                        {"check-prefetch", file}})
    expect_refused(args, file, what);
}

TEST(Hostile, DeepNestingInEveryHeaderObject) {
  TempDir dir;
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const char* key : {"clock", "run_config", "tracer"}) {
    fs::path f = dir.path() / (std::string("deep_") + key + ".json");
    write_file(f, kHeader + ",\"" + key + "\":" + deep + "},\"traceEvents\":[]}");
    expect_refused_everywhere(f.string(), "nested deeper than 128 levels");
  }
  // Inside an event's args, and objects rather than arrays.
  std::string objs;
  for (int i = 0; i < 50000; ++i) objs += "{\"a\":";
  objs += "1" + std::string(50000, '}');
  fs::path args = dir.path() / "deep_args.json";
  write_file(args, kHeader + "},\"traceEvents\":[{\"ph\":\"i\",\"name\":\"x\",\"pid\":0,\"tid\":1,\"ts\":1,\"args\":" +
                       objs + "}]}");
  expect_refused_everywhere(args.string(), "nested deeper than 128 levels");
  // Kineto's distributedInfo (report reads Kineto files).
  fs::path kineto = dir.path() / "deep_kineto.json";
  write_file(kineto, "{\"schemaVersion\":1,\"distributedInfo\":" + deep +
                         ",\"traceEvents\":[{\"ph\":\"X\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":1.5,\"dur\":2}]}");
  expect_refused({"report", kineto.string()}, kineto.string(),
                 "distributedInfo nests objects and arrays deeper than 128 levels");
}

TEST(Hostile, NonRegularFilesRefusedByName) {
  TempDir dir;
  fs::path fifo = dir.path() / "fifo.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_refused_everywhere(fifo.string(), "is a FIFO (named pipe), not a regular file");
  expect_refused_everywhere("/dev/zero", "is a device, not a regular file");
}

TEST(Hostile, GzipTrailerIsNeverTrusted) {
  TempDir dir;
  // 26 bytes: a gzip header, a cut deflate stream and a trailer claiming 4 GiB.
  std::string g = gzip(std::string(1000, ' '));
  std::string lie = g.substr(0, 18) + std::string("\xff\xff\xff\xff\0\0\0\0", 8);
  fs::path f = dir.path() / "lie.json.gz";
  write_file(f, lie.substr(0, 26));
  for (const char* cmd : {"inspect", "report"}) {
    std::vector<std::string> a = {"/usr/bin/timeout", "-s", "KILL", "20", SHARDSCOPE_BIN, cmd, f.string()};
    rusage before{}, after{};
    getrusage(RUSAGE_CHILDREN, &before);
    RunResult r = run(a);
    getrusage(RUSAGE_CHILDREN, &after);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find(f.string()), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("bad_alloc"), std::string::npos) << r.err;
    EXPECT_LT(after.ru_maxrss, 300 * 1024) << "KB: the trailer's 4 GiB was allocated";
  }
}

TEST(Hostile, GzipBombsStopAtTheLimit) {
  TempDir dir;
  // 64 MiB of whitespace per member, 16 members: 1 GiB in about 1 MB, inflated by zlib's streaming path.
  std::string ws = gzip(std::string(64 << 20, ' '));
  std::string multi = gzip(kHeader + "},\"traceEvents\":[");
  for (int i = 0; i < 16; ++i) multi += ws;
  fs::path m = dir.path() / "ws_bomb.json.gz";
  write_file(m, multi);
  // One member of 80 MiB of valid events: its trailer is plausible, so libdeflate's one-pass path meets it.
  std::string ev =
      R"({"ph":"X","name":"kernel","cat":"kernel","pid":0,"tid":7,"ts":1000,"dur":5,"args":{"stream":7}},)";
  std::string events = kHeader + "},\"traceEvents\":[";
  while (events.size() < (80u << 20)) events += ev;
  fs::path one = dir.path() / "event_bomb.json.gz";
  write_file(one, gzip(events));
  for (const fs::path& f : {m, one})
    for (const char* cmd : {"inspect", "report"})
      expect_refused({cmd, "--max-trace-bytes", "64MiB", f.string()}, f.string(),
                     "inflates to more than 64 MiB of JSON text, the limit (--max-trace-bytes raises it)", 10);
  // The limit also bounds plain files.
  fs::path plain = dir.path() / "big.json";
  write_file(plain, kHeader + "},\"traceEvents\":[" + std::string(2 << 20, ' ') + "]}");
  expect_refused({"inspect", "--max-trace-bytes", "1MiB", plain.string()}, plain.string(), "over the limit of 1 MiB");
  // Raised, the same file loads.
  RunResult ok = run({SHARDSCOPE_BIN, "inspect", "--max-trace-bytes", "4MiB", plain.string()});
  EXPECT_EQ(ok.rc, 0) << ok.err;
}

// --max-trace-bytes, read one way by the CLI and the viewer: whole bytes with a power-of-1024 suffix. A size
// past 64 bits is refused, not taken as some other number (CLI11's own size reader accepted 10^20).
TEST(Hostile, TraceByteLimitsAreReadOneWay) {
  const std::pair<const char*, uint64_t> good[] = {{"4096", 4096},        {"30k", 30 << 10},
                                                   {"29KiB", 29 << 10},   {"64MiB", 64ull << 20},
                                                   {" 5 M ", 5ull << 20}, {"16gb", 16ull << 30},
                                                   {"1T", 1ull << 40},    {"100b", 100},
                                                   {"15E", 15ull << 60},  {"18446744073709551615", UINT64_MAX}};
  for (const auto& [text, bytes] : good) EXPECT_EQ(trace::parse_bytes(text), bytes) << text;
  for (const char* bad : {"0", "-5", "+5", "lots", "12Q", "1.5M", "", "M", "5 MiBs", "5ib", "5bb",
                          "99999999999999999999", "17179869184G", "16E"})
    EXPECT_EQ(trace::parse_bytes(bad), std::nullopt) << bad;
  RunResult r = run({SHARDSCOPE_BIN, "inspect", "--max-trace-bytes", "99999999999999999999", "x.json"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--max-trace-bytes: wants a size above 0 (4096, 64MiB, 16GiB), not '99999999999999999999'"),
            std::string::npos)
      << r.err;
}

TEST(Hostile, DefaultLimitFollowsTheMemoryAllowed) {
  // In a child: RLIMIT_AS of 2 GiB makes the default an eighth of it.
  pid_t pid = fork();
  if (pid == 0) {
    rlimit r{2ull << 30, 2ull << 30};
    setrlimit(RLIMIT_AS, &r);
    _exit(trace::default_max_text_bytes() == (256ull << 20) ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_LE(trace::default_max_text_bytes(), 4ull << 30);
}

TEST(Hostile, LongUnterminatedStringInGzipIsACutNotAHang) {
  TempDir dir;
  // One whole event, then a 40 MB string that never ends (over the 16 MiB string limit): about 40 KB of gzip.
  std::string text = kHeader +
                     R"(},"traceEvents":[{"ph":"i","name":"kept","pid":0,"tid":1,"ts":1},{"ph":"X","name":")" +
                     std::string(40'000'000, 'a');
  fs::path f = dir.path() / "long_string.json.gz";
  write_file(f, gzip(text));
  const uint64_t at = text.find("\"aaaa");
  for (const char* cmd : {"inspect", "report"}) {
    auto t0 = std::chrono::steady_clock::now();
    RunResult r = run({"/usr/bin/timeout", "-s", "KILL", "20", SHARDSCOPE_BIN, cmd, f.string()});
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.rc, 0) << r.err;  // the event before the cut is kept, with a warning
    EXPECT_NE(r.err.find(f.string() + ": file cut off at byte " + std::to_string(at)), std::string::npos)
        << r.err.substr(0, 500);
    EXPECT_LT(r.err.size(), 2000u) << "the partial token is not echoed";
    EXPECT_LT(s, 5.0);
  }
  // A string over the limit that does end is refused where it starts.
  fs::path closed = dir.path() / "long_closed.json";
  write_file(closed, kHeader + R"(},"traceEvents":[{"ph":"X","name":")" + std::string(20 << 20, 'a') + "\"}]}");
  expect_refused({"report", closed.string()}, closed.string(), "over the limit of 16 MiB");
}

TEST(Hostile, TimesOutOfRangeAreErrors) {
  TempDir dir;
  const std::string ev = R"(},"traceEvents":[{"ph":"X","name":"k","pid":0,"tid":1,)";
  struct Case {
    const char* name;
    std::string fields, what;
  } cases[] = {
      {"ts_max.json", R"("ts":9223372036854775807,"dur":1)",
       "traceEvents[0].ts 9223372036854775807 µs is out of range"},
      {"dur_big.json", R"("ts":1,"dur":9300000000000000)", "traceEvents[0].dur 9300000000000000 µs is out of range"},
      {"ts_u64.json", R"("ts":18446744073709551615,"dur":1)", "is out of range"},
      {"ts_float.json", R"("ts":9.3e15,"dur":1)", "traceEvents[0].ts 9.3e15 µs is out of range"},
      {"end.json", R"("ts":9000000000000000,"dur":900000000000000)", "ends beyond the nanosecond range"},
  };
  for (const Case& c : cases) {
    fs::path f = dir.path() / c.name;
    write_file(f, kHeader + ev + c.fields + "}]}");
    expect_refused_everywhere(f.string(), c.what);
  }
}

TEST(Hostile, HeaderFieldsOfTheWrongKind) {
  TempDir dir;
  struct Case {
    const char* name;
    std::string header, what;
  } cases[] = {
      {"neg.json", R"({"shardscope":{"schema_version":1,"rank":-5,"world_size":-1})",
       "\"shardscope\".\"rank\" is -5: not an integer from 0 up"},
      {"world.json", R"({"shardscope":{"schema_version":1,"rank":0,"world_size":-1})",
       "\"shardscope\".\"world_size\" is -1: not an integer from 1 up"},
      {"host.json", R"({"shardscope":{"schema_version":1,"rank":0,"world_size":1,"host":null})",
       "\"shardscope\".\"host\" is null: not a string"},
      {"dropped.json", R"({"shardscope":{"schema_version":1,"rank":0,"world_size":1,"dropped_records":"many"})",
       "\"dropped_records\" is \"many\""},
  };
  for (const Case& c : cases) {
    fs::path f = dir.path() / c.name;
    write_file(f, c.header + R"(,"traceEvents":[]})");
    expect_refused_everywhere(f.string(), c.what);
  }
}

TEST(Hostile, InspectReadsAKinetoFileAsReportDoes) {
  TempDir dir;
  std::string events = R"({"schemaVersion":1,"deviceProperties":[],"traceEvents":[)";
  for (int i = 0; i < 200000; ++i) events += R"({"ph":"X","name":"k","pid":0,"tid":7,"ts":1.5,"dur":2},)";
  events += R"({"name":"Record Window End","ph":"i","s":"g","pid":"","tid":"","ts":5}]})";
  fs::path f = dir.path() / "kineto.json";
  write_file(f, events);
  RunResult i = run({SHARDSCOPE_BIN, "inspect", f.string()});
  EXPECT_EQ(i.rc, 0) << i.err;
  EXPECT_NE(i.out.find("(kineto)"), std::string::npos) << i.out;
  EXPECT_NE(i.out.find("events    200000 on 1 tracks"), std::string::npos) << i.out;
  RunResult r = run({SHARDSCOPE_BIN, "report", f.string()});
  EXPECT_EQ(r.rc, 0) << r.err;
}

// The Chrome trace's bare-array form (PyTorch's legacy profiler): refused in one line, or read up to its cut.
TEST(Hostile, BareArrays) {
  TempDir dir;
  const std::string ev = R"({"name":"a","ph":"X","ts":1,"dur":1,"tid":1,"pid":"CPU functions")";
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  fs::path nested = dir.path() / "nested.json";
  write_file(nested, deep);
  expect_refused({"report", nested.string()}, nested.string(), "unknown format: no importer reads it");
  fs::path deep_event = dir.path() / "deep_event.json";
  write_file(deep_event, "[" + ev + "}," + deep + "]");
  expect_refused({"report", deep_event.string()}, deep_event.string(), "at byte 68: array[1] is not an object");
  fs::path number = dir.path() / "number.json";
  write_file(number, "[" + ev + "},\"x\"]");
  expect_refused({"report", number.string()}, number.string(), "at byte 68: array[1] is not an object");
  // Deep args are read past, as in the object form: the event loads.
  fs::path deep_args = dir.path() / "deep_args.json";
  write_file(deep_args, "[" + ev + ",\"args\":" + deep + "}]");
  RunResult r = run({SHARDSCOPE_BIN, "report", "--format", "json", deep_args.string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["ranks"][0]["events"], 1);
  // Cut in its third event: the two before it, and one warning saying so.
  fs::path cut = dir.path() / "cut.json";
  write_file(cut, "[" + ev + "}," + ev + "}," + ev.substr(0, 20));
  r = run({SHARDSCOPE_BIN, "report", "--format", "json", cut.string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find(cut.string() + ": file cut off at byte 135 of 155: read the 2 whole events before the cut"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["ranks"][0]["events"], 2);
}

TEST(Hostile, ZeroLengthDeviceEventsKeepSharesInRange) {
  TempDir dir;
  fs::path f = dir.path() / "zero.json";
  write_file(f, kHeader + R"(},"traceEvents":[
{"ph":"X","name":"ncclDevKernel_ReduceScatter_Sum_f32_RING_LL","cat":"comm","pid":0,"tid":7,"ts":10.3,"dur":0,"args":{"stream":7}},
{"ph":"X","name":"ncclDevKernel_ReduceScatter_Sum_f32_RING_LL","cat":"comm","pid":0,"tid":7,"ts":500.3,"dur":0,"args":{"stream":7}},
{"ph":"X","name":"gemm","cat":"kernel","pid":0,"tid":7,"ts":100,"dur":3,"args":{"stream":7}}]})");
  RunResult r = run({SHARDSCOPE_BIN, "report", f.string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.find("-0."), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("100.2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("non-compute 0.00 %"), std::string::npos) << r.out;
}

TEST(Hostile, ImplausibleParameterCountIsNotApplicable) {
  TempDir dir;
  fs::path f = dir.path() / "params.json";
  write_file(
      f,
      kHeader +
          R"(,"run_config":{"sharding":"full_shard","world_size":1,"units":[{"id":0,"params":1e308},{"id":1,"params":1e308}]}},"traceEvents":[
{"ph":"X","name":"gemm","cat":"kernel","pid":0,"tid":7,"ts":100,"dur":3,"args":{"stream":7}}]})");
  for (const char* fmt : {"text", "html", "json"}) {
    RunResult r = run({SHARDSCOPE_BIN, "report", "--format", fmt, f.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out.find("inf"), std::string::npos) << fmt;
    EXPECT_EQ(r.out.find("nan"), std::string::npos) << fmt;
    if (std::string(fmt) != "html") {
      EXPECT_NE(r.out.find("not a parameter count"), std::string::npos) << r.out;
    }
  }
}

TEST(Hostile, StragglerTotalsNeverWrap) {
  TempDir dir;
  // Two ranks whose clock pairs put them at the two ends of the int64 range: the lateness saturates.
  auto rank = [&](int r, const char* realtime) {
    std::string t = std::string(R"({"shardscope":{"schema_version":1,"rank":)") + std::to_string(r) +
                    R"(,"world_size":2,"clock":{"sync":{"monotonic_ns":0,"realtime_ns":)" + realtime +
                    R"(}}},"traceEvents":[)";
    for (int i = 0; i < 3; ++i)
      t += std::string(i ? "," : "") +
           R"({"ph":"X","name":"ncclDevKernel_AllGather_RING_LL","cat":"comm","pid":0,"tid":7,"ts":)" +
           std::to_string(10 + i * 10) + R"(,"dur":1,"args":{"stream":7}})";
    fs::path f = dir.path() / ("rank" + std::to_string(r) + ".json");
    write_file(f, t + "]}");
    return f.string();
  };
  std::string a = rank(0, "-9000000000000000000"), b = rank(1, "9000000000000000000");
  // Starts that far apart are two runs' (refused); --allow-mixed analyses them, which is what is tested here.
  RunResult r = run({SHARDSCOPE_BIN, "report", "--format", "json", "--allow-mixed", a, b});
  ASSERT_EQ(r.rc, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  bool seen = false;
  for (const auto& rk : j["stragglers"]["ranks"]) {
    if (rk["times_last"].get<int>() == 0) continue;
    seen = true;
    // A total that reached the end of int64 is not a number (issue #25 item 4): null, never a wrapped one.
    if (rk["total_late_by_ns"].is_null()) continue;
    ASSERT_FALSE(rk["max_late_by_ns"].is_null()) << rk.dump();
    EXPECT_GE(rk["total_late_by_ns"].get<int64_t>(), rk["max_late_by_ns"].get<int64_t>()) << rk.dump();
    EXPECT_GE(rk["max_late_by_ns"].get<int64_t>(), 0) << rk.dump();
  }
  EXPECT_TRUE(seen) << r.out.substr(0, 2000);
  EXPECT_EQ(r.out.find("9223372036854775807"), std::string::npos) << r.out.substr(0, 2000);
}

TEST(Hostile, ClockPairsBeyondInt64MapNoWallStart) {
  TempDir dir;
  // realtime - monotonic does not fit in int64: rank 0's start has no wall time, so the check that one run's
  // ranks start together has nothing to compare (it used to wrap and warn about a start decades apart).
  auto rank = [&](int r, const char* monotonic, const char* realtime) {
    std::string t = std::string(R"({"shardscope":{"schema_version":1,"rank":)") + std::to_string(r) +
                    R"(,"world_size":2,"clock":{"sync":{"monotonic_ns":)" + monotonic + R"(,"realtime_ns":)" +
                    realtime +
                    R"(}}},"traceEvents":[{"ph":"X","name":"step","cat":"range","pid":0,"tid":1,"ts":10,"dur":1}]})";
    fs::path f = dir.path() / ("rank" + std::to_string(r) + ".json");
    write_file(f, t);
    return f.string();
  };
  std::string a = rank(0, "-9000000000000000000", "9000000000000000000"), b = rank(1, "0", "1700000000000000000");
  RunResult r = run({SHARDSCOPE_BIN, "report", a, b});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err.find(" starts "), std::string::npos) << r.err;
}

// Outputs never destroy inputs (issue #40): -o naming an input, through a symlink, a hard link or a
// directory given as the input, is one line and exit 2 before anything is read, the input as it was.
TEST(Hostile, AnOutputOverAnInputIsRefused) {
  TempDir dir;
  const fs::path trace = dir.path() / "run" / "trace.rank1.json.gz";
  fs::create_directories(trace.parent_path());
  fs::copy_file(fs::path(SHARDSCOPE_SOURCE_DIR) / "tests/golden/trainer_cpu_2ranks/pre/trace.rank1.json.gz", trace);
  auto bytes = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string original = bytes(trace);
  const auto mtime = fs::last_write_time(trace);
  const fs::path link = dir.path() / "link.txt", hard = dir.path() / "hard.txt";
  fs::create_symlink(trace, link);
  fs::create_hard_link(trace, hard);
  const std::string t = trace.string(), folder = trace.parent_path().string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"report", t, "-o", t}, t},
      {{"report", "--format", "json", t, "-o", link.string()}, link.string()},
      {{"report", t, "-o", hard.string()}, hard.string()},
      {{"report", folder, "-o", folder + "/../run/trace.rank1.json.gz"}, folder + "/../run/trace.rank1.json.gz"},
      {{"report", "--mpi", t, "-o", t}, t},
  };
  for (const auto& [args, out] : cases) {
    std::vector<std::string> a = {SHARDSCOPE_BIN};
    a.insert(a.end(), args.begin(), args.end());
    RunResult r = run(a);
    SCOPED_TRACE(out);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_EQ(r.err, "shardscope: error: refusing to write " + out + " over the input " + t +
                         " (the same file): name another output file\n");
    EXPECT_EQ(bytes(trace), original);
    EXPECT_EQ(fs::last_write_time(trace), mtime);
  }
  // summarize -o DIR: a summary named like an input (here a summary summarised into its own folder).
  RunResult made = run({SHARDSCOPE_BIN, "summarize", t, "-o", folder});
  ASSERT_EQ(made.rc, 0) << made.err;
  const fs::path summary = trace.parent_path() / "trace.rank1.sqlite";
  const std::string summary_bytes = bytes(summary);
  RunResult r = run({SHARDSCOPE_BIN, "summarize", summary.string(), "-o", folder});
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_EQ(r.err, "shardscope: error: refusing to write " + summary.string() + " over the input " + summary.string() +
                       " (the same file): name another output file\n");
  EXPECT_EQ(bytes(summary), summary_bytes);
  EXPECT_EQ(bytes(trace), original);
  // An output that is not an input is written as ever.
  r = run({SHARDSCOPE_BIN, "report", t, "-o", (dir.path() / "report.txt").string()});
  EXPECT_EQ(r.rc, 0) << r.err;
}

// A memory counter of 1e308 (and a prediction to set it against) prints as "out of range" with the field
// named, in every format: never hundreds of digits or "inf".
TEST(Hostile, AbsurdMemoryCountersPrintAsOutOfRange) {
  TempDir dir;
  fs::path f = dir.path() / "memory.json";
  std::string events =
      R"({"ph":"X","name":"gemm","cat":"kernel","pid":0,"tid":7,"ts":100,"dur":3,"args":{"stream":7}})";
  for (const char* c : {"sharded_params", "gradients", "optimizer_state", "allocator_total"})
    events += std::string(R"(,{"ph":"C","name":"memory.)") + c +
              R"(","cat":"counter","pid":1,"tid":1,"ts":101,"args":{"value":1e308}})";
  write_file(f, kHeader +
                    R"(,"run_config":{"sharding":"full_shard","world_size":1,"units":[{"id":0,"params":1000}]}},)" +
                    R"("traceEvents":[)" + events + "]}");
  for (const char* fmt : {"text", "md", "html"}) {
    RunResult r = run({SHARDSCOPE_BIN, "report", "--format", fmt, "--ranks", "all", f.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
    SCOPED_TRACE(fmt);
    EXPECT_EQ(r.out.find("0000000000"), std::string::npos) << r.out.substr(0, 3000);
    EXPECT_EQ(r.out.find("inf"), std::string::npos) << r.out.substr(0, 3000);
    EXPECT_NE(r.out.find("measured out of range vs predicted 4.0 kB (change out of range)"), std::string::npos)
        << r.out.substr(0, 3000);
    EXPECT_NE(r.out.find("sharded_params on rank 0, out of range measured vs 4.0 kB predicted (change out of range)"),
              std::string::npos)
        << r.out.substr(0, 3000);
  }
  RunResult r = run({SHARDSCOPE_BIN, "report", f.string()});
  EXPECT_NE(r.out.find("sharded_params    out of range"), std::string::npos) << r.out;
  // JSON writes the counter as the number it is (1e+308, a double JSON holds), never 309 digits, inf or a
  // percentage; the sentence says out of range.
  RunResult j = run({SHARDSCOPE_BIN, "report", "--format", "json", "--ranks", "all", f.string()});
  ASSERT_EQ(j.rc, 0) << j.err;
  EXPECT_EQ(j.out.find("0000000000"), std::string::npos) << j.out.substr(0, 3000);
  EXPECT_EQ(j.out.find("inf"), std::string::npos) << j.out.substr(0, 3000);
  const nlohmann::json report = nlohmann::json::parse(j.out);
  int absurd = 0;
  for (const nlohmann::json& row : report.at("ranks").at(0).at("memory").at("rows"))
    if (row.at("measured_bytes").is_number_float() && row.at("measured_bytes").get<double>() == 1e308) ++absurd;
  EXPECT_EQ(absurd, 4) << report.at("ranks").at(0).at("memory").dump();
  EXPECT_EQ(report.at("summary").at("memory").at("departs_most").at("measured_bytes").get<double>(), 1e308);
  EXPECT_NE(report.at("ranks")
                .at(0)
                .at("memory")
                .at("departs_most")
                .get<std::string>()
                .find("measured out of range vs predicted 4.0 kB (change out of range)"),
            std::string::npos);
}

}  // namespace
}  // namespace shardscope::test
