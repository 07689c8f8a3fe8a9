// Writer -> file -> reader gives back exactly the events and header that went in, plain and gzip.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "tests/support/temp_dir.h"
#include "tracer/format/keys.h"
#include "tracer/format/parse_progress.h"
#include "tracer/format/reader.h"
#include "tracer/format/writer.h"

namespace shardscope::trace {
namespace {

using json = nlohmann::json;

std::vector<Event> sample_events() {
  return {
      {'M', "process_name", "", 3, 0, 0, 0, "", {{"name", "rank 3"}}},
      {'M', "thread_name", "", 3, 1, 0, 0, "", {{"name", "compute"}}},
      {'X', "forward", "range", 3, 1, 1'700'000'000'123'456'789, 5'001, "", {{"unit", 2}}},
      {'X', "unit \"7\" backward \xce\xbb", "range", 3, 1, 12, 0, "", nullptr},
      {'i', "step_end", "instant", 3, 1, 99, 0, "", {{"step", 1}}},
      {'C', "memory.sharded_params", "counter", 3, 1, 100, 0, "", {{"value", 123456789}}},
      {'s', "launch", "flow", 3, 1, 100, 0, "42", nullptr},
      {'f', "launch", "flow", 3, 2, 150, 0, "42", nullptr},
      {'X', "negative ts", "range", 3, 2, -1500, 1, "", {{"nested", {{"a", json::array({1, 2.5, "x"})}}}}},
  };
}

json sample_header() {
  return {{keys::kSchemaVersion, keys::kSchemaVersionValue},
          {keys::kRank, 3},
          {keys::kWorldSize, 8},
          {keys::kRunConfig, {{"sharding", "full_shard"}, {"units", json::array({{{"id", 0}, {"params", 1000}}})}}}};
}

void check_roundtrip(const std::filesystem::path& path) {
  {
    Writer w(path, sample_header());
    for (const Event& e : sample_events()) w.append(e);
    w.close();
    EXPECT_EQ(w.events_written(), sample_events().size());
  }
  TraceFile f = read_trace(path);
  EXPECT_FALSE(f.truncated.has_value());
  EXPECT_EQ(f.shardscope, sample_header());
  EXPECT_EQ(f.events, sample_events());
  // The file is also plain JSON that any parser (and so Perfetto / chrome://tracing) accepts.
  json whole = json::parse(read_file_text(path));
  EXPECT_TRUE(whole[keys::kTraceEvents].is_array());
  EXPECT_EQ(whole[keys::kTraceEvents].size(), sample_events().size());
  EXPECT_NE(read_file_text(path).find("\"ts\":1700000000123456.789"), std::string::npos);
}

TEST(RoundTrip, PlainJson) {
  test::TempDir dir;
  check_roundtrip(dir.path() / "t.json");
}

TEST(RoundTrip, Gzip) {
  test::TempDir dir;
  check_roundtrip(dir.path() / "t.json.gz");
  bool gz = false;
  read_file_text(dir.path() / "t.json.gz", &gz);
  EXPECT_TRUE(gz);
}

TEST(RoundTrip, MetadataPatchesMergeIntoHeader) {
  test::TempDir dir;
  auto path = dir.path() / "t.json";
  {
    Writer w(path, sample_header());
    w.append({'M', keys::kMetadataPatch, "", 3, 0, 0, 0, "", {{keys::kRunConfig, {{"prefetch", "pre"}}}}});
  }
  TraceFile f = read_trace(path);
  EXPECT_EQ(f.shardscope[keys::kRunConfig]["prefetch"], "pre");
  EXPECT_EQ(f.shardscope[keys::kRunConfig]["sharding"], "full_shard");
}

// A run written into the folder of a previous one replaces each file with a new one: a report or viewer
// still reading the previous trace keeps every byte of it (a truncated file under a reader's mapping or
// read is a crash or a silently short trace).
TEST(RoundTrip, RewritingATraceLeavesAReaderOfTheOldFileItsBytes) {
  test::TempDir dir;
  const auto path = dir.path() / "t.json";
  check_roundtrip(path);
  const std::string before = read_file_text(path);
  const int held = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // the earlier reader
  ASSERT_GE(held, 0);
  {
    Writer w(path, sample_header());  // the new run starts: its file is open, nothing appended yet
    struct stat st {};
    ASSERT_EQ(::fstat(held, &st), 0);
    EXPECT_EQ(uint64_t(st.st_size), before.size()) << "the old file was truncated under its reader";
    std::string again(before.size(), '\0');
    EXPECT_EQ(::pread(held, again.data(), again.size(), 0), ssize_t(before.size()));
    EXPECT_EQ(again, before);
    w.close();
  }
  ::close(held);
  EXPECT_EQ(read_trace(path).events.size(), 0u);  // the path now names the new run's file
}

// The reader holds a file's events in one vector sized from the text up front: 1025 events (just over a power
// of two, where doubling would have held 2048) take 1025 places. A forged file of "ph" strings (20,000 of them
// in 100 kB) reserves no more than the smallest events ({"ph":"M"},) could fill its text with.
TEST(RoundTrip, EventVectorSizedToTheFile) {
  std::string text = R"({"shardscope":{"schema_version":1,"rank":0,"world_size":1},"traceEvents":[)";
  for (int i = 0; i < 1025; ++i) text += std::string(i ? "," : "") + R"({"ph":"X","name":"k","ts":1,"dur":2})";
  text += "]}";
  TraceFile f = parse_trace(text, "in.json");
  ASSERT_EQ(f.events.size(), 1025u);
  EXPECT_EQ(f.events.capacity(), 1025u);

  std::string forged = R"({"shardscope":{"schema_version":1,"rank":0,"world_size":1},"traceEvents":[)";
  forged += R"({"ph":"X","name":"k","ts":1,"dur":2,"args":{"s":[)";
  for (int i = 0; i < 20'000; ++i) forged += std::string(i ? "," : "") + R"("ph")";  // 5 bytes a "ph"
  forged += "]}}]}";
  TraceFile g = parse_trace(forged, "forged.json");
  ASSERT_EQ(g.events.size(), 1u);
  EXPECT_LE(g.events.capacity(), forged.size() / 11);
  EXPECT_GE(g.events.capacity(), 1u);
}

// Events sent to a sink as they are read are those a plain parse keeps, in the same order, with the same
// header and count; TraceFile::events stays empty. A cut file sends its whole events and says where it ends.
TEST(RoundTrip, EventSinkGetsWhatAPlainParseKeeps) {
  test::TempDir dir;
  const std::filesystem::path path = dir.path() / "t.json";
  {
    Writer w(path, sample_header());
    for (const Event& e : sample_events()) w.append(e);
    w.close();
  }
  const std::string text = read_file_text(path);
  for (size_t cut : {text.size(), text.size() - 40}) {
    const std::string_view part = std::string_view(text).substr(0, cut);
    TraceFile kept = parse_trace(part, "t.json");
    std::vector<Event> sent;
    TraceFile streamed = parse_trace(part, "t.json", [&sent](Event&& e) { sent.push_back(std::move(e)); });
    EXPECT_TRUE(streamed.events.empty());
    EXPECT_EQ(sent, kept.events);
    EXPECT_EQ(streamed.event_count, kept.events.size());
    EXPECT_EQ(kept.event_count, kept.events.size());
    EXPECT_EQ(streamed.shardscope, kept.shardscope);
    EXPECT_EQ(streamed.truncated.has_value(), cut < text.size());
  }
  EXPECT_EQ(parse_trace(text, "t.json").events, sample_events());
}

// A text given up as it is parsed (ConsumedTextScope: the loader's own buffer) hands its parsed pages back
// every 4 MB: its first 4 MB read as zeros after the parse, its end is untouched, and the events are those
// of a plain parse. A text not given up is left as it was.
TEST(RoundTrip, ConsumedTextGivesBackItsParsedPages) {
  std::string text = R"({"shardscope":{"schema_version":1,"rank":0,"world_size":1},"traceEvents":[)";
  for (int i = 0; text.size() < (10u << 20); ++i)
    text += std::string(i ? ",\n" : "") + R"({"ph":"X","name":"aten::mm","cat":"cpu_op","tid":1,"ts":)" +
            std::to_string(i * 10) + R"(,"dur":8,"args":{"Input Dims":"[[4096, 4096]]"}})";
  text += "]}";
  const std::string before = text;
  TraceFile plain = parse_trace(text, "in.json");
  ASSERT_EQ(text, before);
  ASSERT_GT(plain.events.size(), 50'000u);

  std::vector<Event> sent;
  {
    ConsumedTextScope scope(text.data(), text.size());
    TraceFile consumed = parse_trace(text, "in.json", [&sent](Event&& e) { sent.push_back(std::move(e)); });
    EXPECT_EQ(consumed.shardscope, plain.shardscope);
  }
  EXPECT_EQ(sent, plain.events);
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const size_t zeros = size_t(std::count(text.begin(), text.begin() + (4 << 20), '\0'));
  EXPECT_GE(zeros, (4u << 20) - 2 * page);
  EXPECT_EQ(text.substr(text.size() - 200), before.substr(before.size() - 200));
}

}  // namespace
}  // namespace shardscope::trace
