// Bad input: one TraceError naming the file and the byte, never a crash.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.h"
#include "tracer/format/error.h"
#include "tracer/format/reader.h"

namespace shardscope::trace {
namespace {

constexpr const char* kHeader = R"({"shardscope":{"schema_version":1,"rank":0,"world_size":1},"traceEvents":[)";

void expect_error(const std::string& text, uint64_t offset, const std::string& message_part) {
  try {
    parse_trace(text, "in.json");
    FAIL() << "no error for: " << text;
  } catch (const TraceError& e) {
    EXPECT_EQ(e.file(), "in.json");
    EXPECT_EQ(e.offset(), offset) << e.what();
    EXPECT_NE(std::string(e.what()).find(message_part), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("in.json: at byte " + std::to_string(offset)), std::string::npos) << e.what();
  }
}

TEST(BadInput, EmptyAndWhitespace) {
  expect_error("", 0, "empty file");
  expect_error(" \n\t", 0, "only whitespace");
}

TEST(BadInput, NotJson) {
  expect_error("hello", 0, "syntax error");
  std::string h = kHeader;
  std::string doubled = h + "{\"ph\":\"X\",,}]}";
  expect_error(doubled, doubled.find(",,") + 1, "syntax error");  // the second comma
  expect_error(std::string("\x01\x02\x03garbage", 10), 0, "syntax error");
}

TEST(BadInput, TrailingGarbageIsNotTruncation) {
  std::string ok = std::string(kHeader) + "]}";
  expect_error(ok + "xyz", ok.size(), "syntax error");
}

TEST(BadInput, WrongSchema) {
  expect_error("[]", 0, "top level is an array");
  expect_error("42", 0, "not a JSON object");
  // A PyTorch profiler trace is valid JSON but not ours: said at its first Kineto key, before its events
  // are read; one without such a key, at its first event that is not a shardscope event, or at its end.
  std::string kineto = R"({"schemaVersion":1,"traceEvents":[{"ph":"X","name":"k","pid":0,"tid":7,"ts":1.5,"dur":2}]})";
  expect_error(kineto, 1, "not a shardscope trace file: \"schemaVersion\" is a PyTorch profiler (Kineto) trace's key");
  std::string chrome = R"({"traceEvents":[{"ph":"X","name":"k","pid":"Spans","tid":7,"ts":1.5,"dur":2}]})";
  expect_error(
      chrome, 16,
      "no \"shardscope\" header before the events: not a shardscope trace file (traceEvents[0].pid is not an integer)");
  std::string plain = R"({"traceEvents":[{"ph":"X","name":"k","pid":0,"tid":7,"ts":1.5,"dur":2}]})";
  expect_error(plain, plain.size(), "no \"shardscope\" object");
  // Header problems point at the header's '{'.
  std::string newer = R"({"shardscope":{"schema_version":99},"traceEvents":[]})";
  expect_error(newer, 14, "schema_version 99");
  expect_error(R"({"shardscope":{"rank":0},"traceEvents":[]})", 14, "schema_version\" is missing");
  // Bad top-level values point at their key.
  std::string events_object = R"({"shardscope":{"schema_version":1},"traceEvents":{}})";
  expect_error(events_object, events_object.find("\"traceEvents\""), "\"traceEvents\" is not an array");
  expect_error(R"({"shardscope":{"schema_version":1},"traceEvents":5})", 35, "\"traceEvents\" is not an array");
  std::string no_events = R"({"shardscope":{"schema_version":1}})";
  expect_error(no_events, no_events.size(), "no \"traceEvents\"");
  expect_error(R"({"shardscope":3,"traceEvents":[]})", 1, "\"shardscope\" is not an object");
}

TEST(BadInput, WrongEventsPointAtTheirOpeningBrace) {
  std::string h = kHeader;
  std::string first = R"({"ph":"X","name":"a","ts":1,"dur":1})";
  expect_error(h + "7]}", h.size(), "traceEvents[0] is not an object");
  expect_error(h + first + ",[1]]}", h.size() + first.size() + 1, "traceEvents[1] is an array");
  expect_error(h + R"({"name":"a","ts":1}]})", h.size(), "traceEvents[0] has no \"ph\"");
  expect_error(h + first + R"(,{"ph":"X","name":"b","ts":"soon","dur":1}]})", h.size() + first.size() + 1,
               "traceEvents[1].ts is not a time");
  expect_error(h + R"({"ph":"X","name":"a","ts":1}]})", h.size(), "without \"dur\"");
  expect_error(h + R"({"ph":"XX","name":"a"}]})", h.size(), "ph is not a one-letter string");
  expect_error(h + R"({"ph":"X","pid":"r0","ts":1,"dur":1}]})", h.size(), "pid is not an integer");
  expect_error(h + R"({"ph":"X","ts":1,"dur":-1}]})", h.size(), "negative duration");
  expect_error(h + first + "," + R"({"ph":"X","ts":1,"dur":1,"args":[1]}]})", h.size() + first.size() + 1,
               "args is not an object");
}

TEST(BadInput, TruncatedInsideHeader) {
  std::string h = kHeader;
  expect_error(h.substr(0, 20), 20, "cut off before its \"shardscope\" header");
}

TEST(BadInput, TruncatedAfterHeaderLoadsWithNoEvents) {
  std::string h = std::string(kHeader) + R"({"ph":"X","name":"a","ts":1,"dur":1},{"ph":"X")";
  TraceFile f = parse_trace(h, "in.json");
  ASSERT_TRUE(f.truncated);
  EXPECT_EQ(f.truncated->offset, h.size());
  EXPECT_EQ(f.events.size(), 1u);
}

TEST(BadInput, Files) {
  test::TempDir dir;
  auto missing = dir.path() / "missing.json";
  try {
    read_trace(missing);
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_EQ(e.file(), missing.string());
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
  }
  try {
    read_trace(dir.path());
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos);
  }
  // A gzip header followed by garbage.
  auto corrupt = dir.path() / "corrupt.json.gz";
  {
    std::ofstream out(corrupt, std::ios::binary);
    const unsigned char bytes[] = {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03, 0xff, 0xff, 0xff, 0xff, 0x00, 0x12};
    out.write(reinterpret_cast<const char*>(bytes), sizeof bytes);
  }
  try {
    read_trace(corrupt);
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt gzip data"), std::string::npos) << e.what();
    EXPECT_EQ(e.file(), corrupt.string());
  }
}

}  // namespace
}  // namespace shardscope::trace
