// The events array is read with simdjson a batch at a time, and by the SAX parse again where simdjson cannot
// read a batch as nlohmann would: small batches put many boundaries, errors and cuts in later batches, and the
// events, messages (line, column, the quoted text) and offsets must be those of a file read in one piece.
#include <gtest/gtest.h>

#include <string>

#include "tracer/format/error.h"
#include "tracer/format/limits.h"
#include "tracer/format/reader.h"

namespace shardscope::trace {
namespace {

constexpr const char* kHead = R"({"shardscope": {"schema_version": 1, "rank": 0, "world_size": 1}, "traceEvents": [)";

// One event a line (the header on line 1, event i on line i + 2), each ending with its number as the last
// token, and strings that hold what a guessed batch end looks for ("}," and "}]").
std::string event(int i) {
  std::string args = R"({"s": "a},\"{b}]", "nested": {"list": [1, 2.5, true, null]}, "u": "\u00e9\n", "i": )" +
                     std::to_string(i) + "}";
  if (i % 7 == 3) args = R"({"deep": [[[{"x": "}, {"}]]], "i": )" + std::to_string(i) + "}";
  return R"({"ph": "X", "cat": "c", "name": "ev)" + std::to_string(i) + R"(", "pid": 0, "tid": )" +
         std::to_string(i % 3) + R"(, "ts": )" + std::to_string(1000 + i) + R"(.5, "dur": 2, "args": )" + args + "}";
}

std::string trace(int n) {
  std::string t = std::string(kHead) + "\n";
  for (int i = 0; i < n; ++i) t += event(i) + (i + 1 < n ? ",\n" : "\n");
  return t + "]}\n";
}

struct Batches {
  explicit Batches(size_t bytes) { set_events_batch_bytes(bytes); }
  ~Batches() { set_events_batch_bytes(0); }
};

std::string error_of(const std::string& text) {
  try {
    parse_trace(text, "in.json");
  } catch (const TraceError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ReaderBatches, EveryBatchSizeReadsTheSameEvents) {
  const std::string text = trace(200);
  const TraceFile whole = parse_trace(text, "in.json");
  ASSERT_EQ(whole.events.size(), 200u);
  EXPECT_EQ(whole.events[150].name, "ev150");
  EXPECT_EQ(whole.events[150].ts_ns, 1150500);
  EXPECT_EQ(whole.events[150].tid, 0);
  EXPECT_EQ(whole.events[151].args["s"], "a},\"{b}]");
  EXPECT_EQ(whole.events[3].args["deep"][0][0][0]["x"], "}, {");
  for (size_t bytes : {1, 64, 300, 1000, 5000}) {
    Batches b(bytes);
    const TraceFile f = parse_trace(text, "in.json");
    EXPECT_EQ(f.events, whole.events) << bytes;
    EXPECT_EQ(f.shardscope, whole.shardscope) << bytes;
  }
}

TEST(ReaderBatches, AWrongEventInALaterBatchIsNamedAtItsBrace) {
  std::string text = trace(200);
  const std::string bad = R"("ts": 1150.5)";
  const size_t at = text.find(bad);
  text.replace(at, bad.size(), R"("ts": "soon")");
  const uint64_t brace = text.rfind('{', text.rfind("\"ph\"", at));
  for (size_t bytes : {0, 64, 1000}) {
    Batches b(bytes);
    EXPECT_EQ(error_of(text),
              "in.json: at byte " + std::to_string(brace) + ": traceEvents[150].ts is not a time in microseconds")
        << bytes;
  }
}

TEST(ReaderBatches, ASyntaxErrorInALaterBatchKeepsLineColumnAndQuote) {
  std::string text = trace(200);
  const size_t at = text.find("{\"ph\": \"X\", \"cat\": \"c\", \"name\": \"ev150\"") + 1;
  text.insert(at, "x");
  // The lexer quotes from the last number it began: event 149's "i" (149), its two closing braces, the comma,
  // the newline and what it read of line 152; the message keeps 40 characters of the 42 after the quote.
  const std::string quoted = "149}},<U+000A>{x'; expected string literal";
  const std::string expected = "in.json: at byte " + std::to_string(at) +
                               ": parse error at line 152, column 2: syntax error while parsing object key - "
                               "invalid literal; last read: '" +
                               quoted.substr(0, 40) + "'... (" + std::to_string(quoted.size()) + " bytes)";
  for (size_t bytes : {0, 64, 1000}) {
    Batches b(bytes);
    EXPECT_EQ(error_of(text), expected) << bytes;
  }
}

TEST(ReaderBatches, AFileCutInALaterBatchLoadsItsWholeEvents) {
  const std::string full = trace(200);
  const std::string text = full.substr(0, full.find("\"name\": \"ev150\""));
  for (size_t bytes : {0, 64, 1000}) {
    Batches b(bytes);
    const TraceFile f = parse_trace(text, "in.json");
    EXPECT_EQ(f.event_count, 150u) << bytes;
    ASSERT_TRUE(f.truncated) << bytes;
    EXPECT_EQ(f.truncated->offset, text.size()) << bytes;
  }
}

TEST(ReaderBatches, AHeaderAfterTheEventsAndAPatchAmongThem) {
  std::string text = R"({"traceEvents": [)";
  for (int i = 0; i < 50; ++i) text += event(i) + ",\n";
  text += R"({"ph": "M", "name": "shardscope_metadata", "pid": 0, "tid": 0, "args": {"host": "h2"}}],)";
  text += R"( "shardscope": {"schema_version": 1, "rank": 3, "host": "h1"}})";
  for (size_t bytes : {0, 64}) {
    Batches b(bytes);
    const TraceFile f = parse_trace(text, "in.json");
    EXPECT_EQ(f.event_count, 51u) << bytes;
    EXPECT_EQ(f.shardscope["rank"], 3) << bytes;
    EXPECT_EQ(f.shardscope["host"], "h1") << bytes;  // the patch came before the header: not merged
  }
}

// The check for strings over the limit skips texts it can prove have none (a plain quote in every block of
// half the limit): a long string made of escaped quotes must still be found, where it starts.
TEST(ReaderBatches, AStringOverTheLimitIsFoundWhateverItHolds) {
  const uint64_t saved = limits().max_string_bytes;
  limits().max_string_bytes = 1000;
  const std::string fine = trace(200);
  EXPECT_EQ(parse_trace(fine, "in.json").event_count, 200u);
  std::string quotes;
  for (int i = 0; i < 1000; ++i) quotes += "a\\\"";  // a\" (3 bytes; 3,000 in all)
  std::string text = std::string(kHead) + event(0) + R"(, {"ph": "i", "name": ")";
  const uint64_t open = text.size() - 1;
  text += quotes + R"(", "ts": 1}]})";
  EXPECT_EQ(error_of(text), "in.json: at byte " + std::to_string(open) +
                                ": a string of 3000 bytes, over the limit of 1000 bytes: refused");
  limits().max_string_bytes = saved;
}

}  // namespace
}  // namespace shardscope::trace
