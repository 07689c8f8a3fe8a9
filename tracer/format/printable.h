// Text from a file or a user, made safe to print on one line: control characters (a newline in a file name,
// a terminal escape in an event name) shown as \n, \t, \xNN (C0 controls and DEL), \uNNNN (C1 controls, U+0085), and at most `max` bytes kept, the rest said as
// a count. Every line shardscope prints that quotes input goes through it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace shardscope::trace {

inline constexpr size_t kMaxQuotedBytes = 240;  // a quoted value or an error's detail
inline constexpr size_t kMaxLineBytes = 320;    // a whole message line

// Header-only: TraceError (error.h) uses it, and every floor throws TraceError.
inline std::string printable(std::string_view s, size_t max = std::string_view::npos) {
  std::string out;
  out.reserve(std::min(s.size(), max == std::string_view::npos ? s.size() : max) + 16);
  size_t i = 0;
  for (; i < s.size() && out.size() < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      // A C1 control (U+0080 to U+009F, UTF-8 C2 80 to C2 9F): U+0085 is a line break to some terminals and
      // editors, U+009B a terminal escape.
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(s[++i]));
      out += buf;
      continue;
    }
    if (c >= 0x20 && c != 0x7f) {
      out += char(c);
      continue;
    }
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
      }
    }
  }
  if (i < s.size()) {
    // Cut at a character boundary: drop UTF-8 continuation bytes left without their lead.
    while (i > 0 && i < s.size() && (static_cast<unsigned char>(s[i]) & 0xc0) == 0x80 && !out.empty())
      out.pop_back(), --i;
    out += "... (" + std::to_string(s.size() - i) + " more bytes)";
  }
  return out;
}

}  // namespace shardscope::trace
