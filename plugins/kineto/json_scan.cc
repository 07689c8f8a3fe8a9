#include "plugins/kineto/json_scan.h"

#include <algorithm>
#include <cstring>

#include "plugins/common/text_window.h"
#include "tracer/format/error.h"

namespace shardscope::plugins {
namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// A scalar (number, true, false, null): up to the next ',', '}' or ']'.
const char* skip_scalar(const char* p, const char* end) {
  while (p < end && *p != ',' && *p != '}' && *p != ']' && !is_space(*p)) ++p;
  return p < end ? p : nullptr;
}

const char* skip_value(const char* p, const char* end);

}  // namespace

const char* skip_space(const char* p, const char* end) {
  while (p < end && is_space(*p)) ++p;
  return p;
}

// p is at '"'. Returns the position after the closing quote, or nullptr when the text ends first.
const char* skip_string(const char* p, const char* end) {
  const char* s = p + 1;
  for (;;) {
    const char* q = static_cast<const char*>(std::memchr(s, '"', size_t(end - s)));
    if (!q) return nullptr;
    const char* b = q;
    while (b > s && b[-1] == '\\') --b;
    if (((q - b) & 1) == 0) return q + 1;  // an even run of backslashes escapes nothing
    s = q + 1;
  }
}

// p is at '{' or '['. Returns the position after the matching bracket, nullptr when the text ends first.
const char* skip_container(const char* p, const char* end) {
  int depth = 0;
  while (p < end) {
    char c = *p;
    if (c == '"') {
      p = skip_string(p, end);
      if (!p) return nullptr;
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    else if ((c == '}' || c == ']') && --depth == 0)
      return p + 1;
    ++p;
  }
  return nullptr;
}

namespace {

const char* skip_value(const char* p, const char* end) {
  if (p >= end) return nullptr;
  if (*p == '"') return skip_string(p, end);
  if (*p == '{' || *p == '[') return skip_container(p, end);
  return skip_scalar(p, end);
}

}  // namespace

int nesting_depth(std::string_view value) {
  const char* p = value.data();
  const char* end = p + value.size();
  int depth = 0, deepest = 0;
  while (p < end) {
    char c = *p;
    if (c == '"') {
      p = skip_string(p, end);
      if (!p) break;
      continue;
    }
    if (c == '{' || c == '[') deepest = std::max(deepest, ++depth);
    else if (c == '}' || c == ']')
      --depth;
    ++p;
  }
  return deepest;
}

TopLevel scan_top_level(std::string_view text, const std::string& name, const EventsCallback& on_events,
                        TextWindow* window) {
  TopLevel out;
  const char* base = text.data();
  const char* end = window ? window->end() : base + text.size();
  auto at = [&](const char* p) { return uint64_t(p - base); };
  auto fail = [&](const char* p, const std::string& what) { throw trace::TraceError(name, at(p), what); };
  // Reads more of a window's text (at least as much again as from `from`): false when the text has ended.
  auto more = [&](const char* from) {
    if (!window || window->whole()) return false;
    window->extend(end + std::max<ptrdiff_t>(end - from, ptrdiff_t(window->piece_bytes())));
    end = window->end();
    return true;
  };
  auto space = [&](const char* p) {
    while ((p = skip_space(p, end)) == end && more(p)) {}
    return p;
  };
  // A value (or key) from p: nullptr when the text ends inside it.
  auto value = [&](const char* p) {
    const char* v;
    while (!(v = skip_value(p, end)) && more(p)) {}
    return v;
  };

  const char* p = space(text.starts_with("\xEF\xBB\xBF") ? base + 3 : base);  // after a UTF-8 byte order mark
  if (p == end) fail(p, p == base ? "empty file" : "file holds only whitespace");
  if (*p == '[') {
    // Text after the array's ']' is not looked at, as after the object's '}'; a missing ']' is a cut.
    out.has_events = out.bare_array = true;
    ArrayEnd a = on_events(p + 1, out);
    if (!a.end) out.truncated_at = a.truncated_at;
    return out;
  }
  if (*p != '{') fail(p, "not JSON: the top level is neither an object nor an array");
  ++p;
  for (;;) {
    p = space(p);
    if (p == end) return out.truncated_at = at(p), out;
    if (*p == '}') return out;
    if (*p == ',') {
      ++p;
      continue;
    }
    if (*p != '"') fail(p, "not JSON: expected a key");
    const char* key_end = value(p);
    if (!key_end) return out.truncated_at = at(p), out;
    std::string_view key(p + 1, size_t(key_end - p - 2));
    p = space(key_end);
    if (p == end) return out.truncated_at = at(p), out;
    if (*p != ':') fail(p, "not JSON: expected ':' after a key");
    p = space(p + 1);
    if (p == end) return out.truncated_at = at(p), out;
    if (key != "traceEvents") {
      const char* v = value(p);
      if (!v) return out.truncated_at = at(p), out;
      out.members.emplace_back(key, std::string_view(p, size_t(v - p)));
      p = v;
      continue;
    }
    if (*p != '[') fail(p, "\"traceEvents\" is not an array");
    out.has_events = true;
    ArrayEnd a = on_events(p + 1, out);
    if (!a.end) return out.truncated_at = a.truncated_at, out;
    p = a.end;
    if (window) end = window->end();  // the array's parse read on
  }
}

}  // namespace shardscope::plugins
