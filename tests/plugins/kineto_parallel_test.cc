// One Kineto file parsed on several threads gives exactly the rank (and args) of the one-thread parse, and
// the same errors. Small chunks put many chunk boundaries in each file, some inside strings written to look
// like event boundaries ("},{"), so the workers' guesses are wrong there and must be caught.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <zlib.h>

#include "plugins/common/text_window.h"
#include "plugins/kineto/kineto_importer.h"
#include "plugins/shardscope/shardscope_importer.h"
#include "plugins/load/read_text.h"
#include "tests/support/temp_dir.h"
#include "tracer/format/error.h"
#include "tracer/format/limits.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

// Everything a rank holds, one line per item, so that two ranks compare as text.
std::string dump(const model::Rank& r, const model::EventArgs* args = nullptr) {
  std::string out = fmt::format("rank {} of {} source {} format {} truncated {} units {}\n", r.rank, r.world_size,
                                r.source, r.format, r.truncated, int(r.unit_identity));
  for (size_t i = 0; i < r.strings.size(); ++i) out += fmt::format("s{} {}\n", i, r.str(model::StringId(i)));
  for (size_t t = 0; t < r.tracks.size(); ++t) {
    const model::Track& tr = r.tracks[t];
    out += fmt::format("track {} {} {} {}\n", tr.pid, tr.tid, tr.name, int(tr.kind));
    for (size_t i = 0; i < tr.events.size(); ++i) {
      const model::Event& e = tr.events[i];
      out += fmt::format("e {} {} {} {} {} {} {} {} {} {} {} {} {}", e.ts_ns, e.dur_ns, e.bytes, e.issued_ns, e.name,
                         e.cat, e.unit, e.group_size, e.step, int(e.cls), int(e.coll), e.ph, int(e.flags));
      if (args)
        for (const model::Arg& a : args->of(uint32_t(t), uint32_t(i)))
          out += fmt::format(" [{} {} {} {} {}]", a.key, int(a.value.kind), a.value.i, a.value.d, a.value.s);
      out += '\n';
    }
  }
  for (const model::CounterSeries& c : r.counters) {
    out += fmt::format("counter {}\n", c.name);
    for (const model::CounterSample& s : c.samples) out += fmt::format("  {} {}\n", s.ts_ns, s.value);
  }
  for (const model::Step& s : r.steps)
    out += fmt::format("step {} {} {} {} {} {}\n", s.number, s.start_ns, s.end_ns, s.host_start_ns, s.host_end_ns,
                       s.aborted);
  out += fmt::format("config {}\nmetadata {}\n", r.run_config.dump(), r.metadata.dump());
  for (const model::ClockPair& p : r.clock_sync) out += fmt::format("clock {} {}\n", p.trace_ns, p.realtime_ns);
  for (const std::string& w : r.warnings) out += "warning " + w + "\n";
  return out;
}

// The first line where two dumps differ, for a readable failure.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream x(a), y(b);
  std::string la, lb;
  for (size_t n = 1;; ++n) {
    bool ea = !std::getline(x, la), eb = !std::getline(y, lb);
    if (ea && eb) return "none";
    if (ea || eb || la != lb) return fmt::format("line {}: '{}' vs '{}'", n, ea ? "<end>" : la, eb ? "<end>" : lb);
  }
}

struct Parsed {
  std::string dump;
  std::string error;  // the TraceError's message, when it failed
};

Parsed parse(const std::string& text, const plugins::KinetoParseOptions& o, bool keep_args) {
  plugins::Input in{"t.json", text.data(), text.size(), nullptr, false, std::nullopt};
  try {
    model::EventArgs args;
    model::Rank r = plugins::read_kineto(std::move(in), o, keep_args ? &args : nullptr);
    return {dump(r, keep_args ? &args : nullptr), ""};
  } catch (const trace::TraceError& e) {
    return {"", e.what()};
  }
}

// The same text written to a file and read through a window of `piece`-byte pieces (the loader's way for a
// plain Kineto file), its pieces given back behind the parse: a piece of one page cuts most events.
// gzip data of `text` (one member), as a file holds it.
std::string gzip(const std::string& text) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, uLong(text.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data())), zs.avail_in = uInt(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data()), zs.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// `file` holds the bytes on disk (plain or gzip); the text is what they read as.
Parsed parse_windowed(const std::string& file, const plugins::KinetoParseOptions& o, bool keep_args,
                      size_t piece = 4096, size_t* pieces_held = nullptr) {
  test::TempDir dir;
  test::write_file(dir.path() / "t.json", file);
  auto w = std::make_shared<plugins::TextWindow>(dir.path() / "t.json", piece, piece);
  plugins::TextWindow* window = w.get();
  plugins::TextWindowScope scope(window);
  plugins::Input in{"t.json", w->data(), w->size(), w, false, std::nullopt};
  Parsed out;
  try {
    model::EventArgs args;
    model::Rank r = plugins::read_kineto(std::move(in), o, keep_args ? &args : nullptr);
    out = {dump(r, keep_args ? &args : nullptr), ""};
  } catch (const trace::TraceError& e) {
    out = {"", e.what()};
  }
  if (pieces_held) *pieces_held = window->pages_held();  // `in` was moved from: the importer may have let go
  return out;
}

// One thread with the default chunks against 2 and 3 threads with chunks small enough to cut every batch,
// and batches whose ends are guessed against batches scanned event by event.
void expect_same_on_threads(const std::string& text, const std::string& what, size_t chunk = 4096, size_t batch = 1024,
                            std::initializer_list<unsigned> window_threads = {1, 3}) {
  for (bool keep_args : {false, true}) {
    const Parsed one = parse(text, {.threads = 1, .chunk_bytes = chunk, .batch_bytes = batch}, keep_args);
    const Parsed scanned =
        parse(text, {.threads = 1, .chunk_bytes = chunk, .batch_bytes = batch, .guess_batches = false}, keep_args);
    EXPECT_EQ(scanned.error, one.error) << what << ": guessed batches";
    EXPECT_TRUE(scanned.dump == one.dump) << what << ": guessed batches: " << first_difference(scanned.dump, one.dump);
    if (one.error.empty()) {
      // The batches do not change the rank: the default cut gives it too.
      Parsed big = parse(text, {.threads = 1}, keep_args);
      EXPECT_EQ(big.dump == one.dump, true) << what << ": default chunks: " << first_difference(one.dump, big.dump);
    }
    for (unsigned threads : {2u, 3u}) {
      Parsed many = parse(text, {.threads = threads, .chunk_bytes = chunk, .batch_bytes = batch}, keep_args);
      EXPECT_EQ(many.error, one.error) << what << " on " << threads << " threads";
      EXPECT_TRUE(many.dump == one.dump) << what << " on " << threads << " threads, args " << keep_args << ": "
                                         << first_difference(one.dump, many.dump);
    }
    // Through a window of one-page pieces, on one thread and on three.
    for (unsigned threads : window_threads) {
      Parsed w = parse_windowed(text, {.threads = threads, .chunk_bytes = chunk, .batch_bytes = batch}, keep_args);
      EXPECT_EQ(w.error, one.error) << what << " through a window on " << threads << " threads";
      EXPECT_TRUE(w.dump == one.dump) << what << " through a window on " << threads << " threads, args " << keep_args
                                      << ": " << first_difference(one.dump, w.dump);
    }
  }
}

// Kineto-like events whose names and args hold what a naive splitter would take for boundaries.
std::string tricky_trace(int iterations, const std::string& head = R"("baseTimeNanoseconds": 1700000000000000000, )",
                         const std::string& tail = R"(, "distributedInfo": {"rank": 3, "world_size": 8})") {
  std::string s = "{\"schemaVersion\": 1, " + head + "\"traceEvents\": [\n";
  for (int i = 0; i < iterations; ++i) {
    const double ts = 1000.0 + 20.0 * i;
    s += fmt::format(
        R"({{"ph": "X", "cat": "cpu_op", "name": "aten::mm }},{{\"ph\": \"X\", [{}]", "pid": 10, "tid": 10, "ts": {:.3f}, "dur": 12.5, )"
        R"("args": {{"External id": {}, "note": "}}, {{ \\\" ] [ {{\"ph\":\"X\"}}", "Input Dims": [[4, 4], [{}]]}}}},)"
        "\n",
        i, ts, i, i);
    s += fmt::format(
        R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": {:.3f}, "dur": 4, "args": {{"correlation": {}}}}},)"
        "\n",
        ts + 2, i);
    s += fmt::format(
        R"({{"ph": "X", "cat": "kernel", "name": "gemm_{}\\\\", "pid": 0, "tid": 7, "ts": {:.3f}, "dur": 9.5, "args": {{"stream": 7, "correlation": {}, "grid": [1,2,3], "parts": [{{"a": 1}},{{"b": [2]}}]}}}},)"
        "\n",
        i % 5, ts + 8, i);
    if (i % 40 == 39)
      s += fmt::format(
          R"({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", "pid": 10, "tid": 10, "ts": {:.3f}, "dur": 800}},)"
          "\n",
          i / 40, ts - 780);
    if (i % 16 == 0)
      s += fmt::format(
          R"({{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL", "pid": 0, "tid": 20, "ts": {:.3f}, "dur": 50, )"
          R"("args": {{"stream": 20, "correlation": {}, "Collective name": "_allgather_base", "dtype": "BFloat16", "In msg nelems": 1024, )"
          R"("Out msg nelems": 8192, "Group size": 8}}}},)"
          "\n",
          ts + 10, i);
    s += fmt::format(R"({{"ph": "s", "id": {}, "pid": 10, "tid": 10, "ts": {:.3f}, "cat": "ac2g", "name": "ac2g"}},)"
                     "\n",
                     i, ts + 2);
  }
  s += R"({"ph": "M", "name": "thread_name", "pid": 10, "tid": 10, "args": {"name": "python"}}])" + tail + "}";
  return s;
}

TEST(KinetoParallel, TrickyStringsGiveTheSameRank) {
  const std::string text = tricky_trace(3000);
  ASSERT_GT(text.size(), 1'000'000u);
  expect_same_on_threads(text, "tricky");
  // Chunks of a single batch, and batches of a few events.
  expect_same_on_threads(text, "tricky, tiny chunks", 512, 256);
  // Past the events array, objects in a list ("},{" again) over several batches: a guessed end there must
  // not pass for the events'.
  std::string groups;
  for (int g = 0; g < 200; ++g) groups += fmt::format(R"({}{{"pg_name": "{}", "ranks": [0, 1]}})", g ? "," : "", g);
  expect_same_on_threads(tricky_trace(300, "", R"(, "distributedInfo": {"rank": 0, "pg_config": [)" + groups + "]}"),
                         "groups after the events");
}

TEST(KinetoParallel, BaseTimeAfterTheEventsIsAppliedToThem) {
  const std::string late = tricky_trace(200, "", R"(, "baseTimeNanoseconds": 1700000000000000000)");
  const std::string early = tricky_trace(200, R"("baseTimeNanoseconds": 1700000000000000000, )", "");
  expect_same_on_threads(late, "base after the events");
  Parsed a = parse(late, {.threads = 2, .chunk_bytes = 4096, .batch_bytes = 1024}, false);
  Parsed b = parse(early, {.threads = 2, .chunk_bytes = 4096, .batch_bytes = 1024}, false);
  ASSERT_EQ(a.error, "");
  // The same events at the same times; only the metadata's order differs.
  EXPECT_EQ(a.dump.substr(0, a.dump.find("config")), b.dump.substr(0, b.dump.find("config")));
}

TEST(KinetoParallel, MalformedFilesGiveTheSameErrors) {
  const std::string good = tricky_trace(400);
  auto boundary = [&](size_t from) { return good.find("\n{", from) + 1; };  // an event's '{'
  const size_t early = boundary(200), mid = boundary(good.size() / 2);
  ASSERT_EQ(good[mid], '{');
  struct Case {
    std::string name, text, error;  // error: a part of the message
  };
  std::vector<Case> cases = {
      {"invalid JSON", good.substr(0, mid) + "{\"ph\": \"X\", \"ts\": 1,, }," + good.substr(mid),
       "not valid JSON in the events that start here"},
      {"not an object", good.substr(0, mid) + "17, " + good.substr(mid), "is not an object"},
      {"time out of range",
       good.substr(0, mid) + R"({"ph": "X", "name": "far", "pid": 1, "tid": 1, "ts": 8000000000000000, "dur": 1}, )" +
           good.substr(mid),
       "its time is out of range"},
      // The structural error later in the file wins over the bad event before it, as it did with one thread.
      {"both", good.substr(0, early) + "{\"ph\": ,}, " + good.substr(early, mid - early) + "true, " + good.substr(mid),
       "is not an object"},
      {"cut off", good.substr(0, mid + 40), ""},
  };
  for (const Case& c : cases) {
    Parsed one = parse(c.text, {.threads = 1, .chunk_bytes = 4096, .batch_bytes = 1024}, false);
    if (c.error.empty())
      EXPECT_NE(one.dump.find("file cut off at byte " + std::to_string(mid)), std::string::npos)
          << one.dump.substr(0, 300);
    else
      EXPECT_NE(one.error.find(c.error), std::string::npos) << c.name << ": " << one.error;
    expect_same_on_threads(c.text, c.name);
  }
}

TEST(KinetoParallel, RealTracesGiveTheSameRank) {
  const fs::path data = SHARDSCOPE_DATA_DIR;
  plugins::KinetoImporter kineto;
  plugins::ShardscopeImporter shardscope;
  int seen = 0;
  for (const auto& entry : fs::recursive_directory_iterator(data)) {
    if (!entry.is_regular_file() || entry.path().string().find(".json") == std::string::npos) continue;
    plugins::FileText t = plugins::read_text(entry.path());
    // PyTorch profiler traces only: shardscope's own traces (which the Kineto importer hands over) are not.
    if (!kineto.can_read(t.text().substr(0, 64 * 1024)) || shardscope.can_read(t.text().substr(0, 64 * 1024))) continue;
    ++seen;
    // Chunks of 64 KiB: tens of boundaries in each file, on real names and args.
    // Through a window on three threads only (the one-thread window is the small cases'): the files are large.
    // This test takes about 25 s on the 2-core VM (every real Kineto trace parsed seven ways, with and without
    // args): the window's two of them are the only check of it on real names and args in 64 kB chunks.
    expect_same_on_threads(std::string(t.text()), entry.path().lexically_relative(data).string(), 64 << 10, 16 << 10,
                           {3});
  }
  EXPECT_GE(seen, 8);
}

// The window's edges: events much larger than a piece and than a chunk (a window smaller than one event),
// members before and after the array, a late baseTimeNanoseconds (the file read again), and a window that
// stays small for a long file.
TEST(KinetoParallel, WindowEdgesGiveTheSameRank) {
  // An event of 300 kB: 75 pieces, many 4 kB chunks.
  const std::string big_args = fmt::format(R"("args": {{"External id": 7, "pad": "{}"}})", std::string(300'000, 'x'));
  std::string text = tricky_trace(300, R"("deviceProperties": [{"id": 0, "pad": ")" + std::string(20'000, 'y') +
                                           R"("}], "baseTimeNanoseconds": 1700000000000000000, )");
  const size_t at = text.find("\n{", text.size() / 2) + 1;
  text.insert(at, R"({"ph": "X", "cat": "cpu_op", "name": "huge", "pid": 10, "tid": 10, "ts": 5000.5, "dur": 3, )" +
                      big_args + "},\n");
  expect_same_on_threads(text, "an event of 75 pieces");
  const Parsed one = parse(text, {.threads = 1}, false);
  ASSERT_EQ(one.error, "");
  ASSERT_NE(one.dump.find(" huge\n"), std::string::npos);  // the big event's name was interned: it was read
  // The same, its base given after the events and a long member after them.
  std::string late = text;
  late.erase(late.find(R"("baseTimeNanoseconds": 1700000000000000000, )"), 43);
  late.insert(late.rfind('}'),
              R"(, "baseTimeNanoseconds": 1700000000000000000, "after": ")" + std::string(50'000, 'z') + "\"");
  for (unsigned threads : {1u, 3u}) {
    Parsed w = parse_windowed(late, {.threads = threads, .chunk_bytes = 4096, .batch_bytes = 1024}, false);
    ASSERT_EQ(w.error, "");
    // The same events at the same times as with the base first; only the metadata's order differs.
    EXPECT_EQ(w.dump.substr(0, w.dump.find("config")), one.dump.substr(0, one.dump.find("config")));
  }
  // Cut inside the big event, and inside the member after the array: cut files, as read whole.
  expect_same_on_threads(text.substr(0, at + 150'000), "cut inside the big event");
  expect_same_on_threads(late.substr(0, late.size() - 20'000), "cut inside a member after the array");
  // Nothing, whitespace, a bare '{': the errors of the text read whole.
  for (const std::string& tiny : {std::string(), std::string("  \n "), std::string("{")})
    EXPECT_EQ(parse_windowed(tiny, {.threads = 1}, false).error, parse(tiny, {.threads = 1}, false).error) << tiny;
}

TEST(KinetoParallel, WindowStaysSmallForALongFile) {
  const std::string text = tricky_trace(3000);  // over 1 MB
  size_t held = 0;
  Parsed w = parse_windowed(text, {.threads = 3, .chunk_bytes = 16 << 10, .batch_bytes = 4 << 10}, false, 4096, &held);
  ASSERT_EQ(w.error, "");
  EXPECT_EQ(w.dump, parse(text, {.threads = 1}, false).dump);
  // Three workers' regions ahead and the one read, with a region's margin each side (16 kB each; pieces of
  // 4 kB): about 112 kB, not the file's 1 MB and more.
  EXPECT_GT(held, 4u);
  EXPECT_LE(held, 40u) << "pieces of 4 kB in use at once, for a text of " << text.size() << " bytes";
}

// A gzip file inflates through the window: the same rank as its text read whole, and read_text's errors for
// a cut stream (the text before the cut), corrupt data and a text over the limit.
TEST(KinetoParallel, GzipThroughTheWindowGivesTheTextsRank) {
  const std::string text = tricky_trace(1000);
  const std::string gz = gzip(text);
  for (unsigned threads : {1u, 3u})
    for (bool keep_args : {false, true}) {
      const Parsed whole = parse(text, {.threads = threads, .chunk_bytes = 4096, .batch_bytes = 1024}, keep_args);
      ASSERT_EQ(whole.error, "");
      const Parsed w = parse_windowed(gz, {.threads = threads, .chunk_bytes = 4096, .batch_bytes = 1024}, keep_args);
      EXPECT_EQ(w.error, "");
      EXPECT_TRUE(w.dump == whole.dump) << threads << " threads: " << first_difference(whole.dump, w.dump);
    }
  // Cut at 60 % of its compressed bytes: the events before the cut, as read_text's text of the same file.
  test::TempDir dir;
  test::write_file(dir.path() / "cut.json.gz", gz.substr(0, gz.size() * 6 / 10));
  const plugins::FileText cut = plugins::read_text(dir.path() / "cut.json.gz");
  ASSERT_TRUE(cut.gzip_cut_at.has_value());
  const Parsed cut_whole =
      parse(std::string(cut.text()), {.threads = 3, .chunk_bytes = 4096, .batch_bytes = 1024}, false);
  ASSERT_NE(cut_whole.dump.find("file cut off at byte"), std::string::npos);
  const Parsed cut_w =
      parse_windowed(gz.substr(0, gz.size() * 6 / 10), {.threads = 3, .chunk_bytes = 4096, .batch_bytes = 1024}, false);
  EXPECT_TRUE(cut_w.dump == cut_whole.dump) << first_difference(cut_whole.dump, cut_w.dump);
  // Corrupt deflate data halfway: read_text's message and compressed byte.
  std::string bad = gz;
  for (size_t i = bad.size() / 2; i < bad.size() / 2 + 64; ++i) bad[i] = char(~bad[i]);
  test::write_file(dir.path() / "bad.json.gz", bad);
  std::string read_text_error;
  try {
    plugins::read_text(dir.path() / "bad.json.gz");
  } catch (const trace::TraceError& e) {
    read_text_error = e.what();
  }
  ASSERT_NE(read_text_error.find("corrupt gzip data"), std::string::npos) << read_text_error;
  const Parsed bad_w = parse_windowed(bad, {.threads = 3, .chunk_bytes = 4096, .batch_bytes = 1024}, false);
  EXPECT_EQ(bad_w.error.substr(bad_w.error.find(':')), read_text_error.substr(read_text_error.find(':')));
  // A text over the limit (a third of it): refused as read_text refuses it.
  const uint64_t before = trace::limits().max_text_bytes;
  trace::limits().max_text_bytes = text.size() / 3;
  const Parsed over = parse_windowed(gz, {.threads = 3, .chunk_bytes = 4096, .batch_bytes = 1024}, false);
  trace::limits().max_text_bytes = before;
  EXPECT_NE(over.error.find("inflates to more than"), std::string::npos) << over.error;
}

TEST(KinetoParallel, ThreadsDefaultToTheCoresWithinABound) {
  EXPECT_GE(plugins::default_parse_threads(), 1u);
  EXPECT_LE(plugins::default_parse_threads(), plugins::kMaxParseThreads);
}

}  // namespace
