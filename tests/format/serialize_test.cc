#include "tracer/format/serialize.h"

#include <gtest/gtest.h>

namespace shardscope::trace {
namespace {

TEST(AppendUs, ThreeDecimalsExact) {
  auto us = [](int64_t ns) {
    std::string s;
    append_us(s, ns);
    return s;
  };
  EXPECT_EQ(us(0), "0.000");
  EXPECT_EQ(us(1), "0.001");
  EXPECT_EQ(us(1234567), "1234.567");
  EXPECT_EQ(us(-5), "-0.005");
  EXPECT_EQ(us(-1234567), "-1234.567");
  EXPECT_EQ(us(INT64_MAX), "9223372036854775.807");
  EXPECT_EQ(us(INT64_MIN), "-9223372036854775.808");
}

TEST(ParseUs, IntegerNanosecondsWithoutRounding) {
  EXPECT_EQ(parse_us("1234.567"), 1234567);
  EXPECT_EQ(parse_us("1234"), 1234000);
  EXPECT_EQ(parse_us("1234.5"), 1234500);
  EXPECT_EQ(parse_us("-0.005"), -5);
  // 17 significant digits: a double would lose the last nanosecond here.
  EXPECT_EQ(parse_us("1700000000123456.789"), 1700000000123456789);
  EXPECT_EQ(parse_us("1.5e3"), 1500000);
  EXPECT_EQ(parse_us("0.0015"), 2);  // sub-nanosecond digits round
  EXPECT_EQ(parse_us(""), std::nullopt);
  EXPECT_EQ(parse_us("abc"), std::nullopt);
}

TEST(ParseUs, InvertsAppendUs) {
  for (int64_t ns : {int64_t(0), int64_t(7), int64_t(999), int64_t(1000), int64_t(123456789012345), int64_t(-42)}) {
    std::string s;
    append_us(s, ns);
    EXPECT_EQ(parse_us(s), ns) << s;
  }
}

TEST(AppendJsonString, EscapesAndSurvivesBadUtf8) {
  std::string s;
  append_json_string(s, "plain");
  EXPECT_EQ(s, "\"plain\"");
  s.clear();
  append_json_string(s, "a\"b\\c\n");
  EXPECT_EQ(s, "\"a\\\"b\\\\c\\n\"");
  s.clear();
  append_json_string(s, "bad\xff");
  EXPECT_EQ(nlohmann::json::parse(s).get<std::string>(), "bad\xef\xbf\xbd");
}

}  // namespace
}  // namespace shardscope::trace
