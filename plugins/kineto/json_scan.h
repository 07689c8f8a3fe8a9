// A fast structural pass over a Chrome-trace JSON object: finds its top-level members and cuts the
// "traceEvents" array into batches of whole events (about batch_bytes each), so that each batch can be
// parsed by itself. Parsing the whole file at once would need a structural index as large as the text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardscope::plugins {

struct TopLevel {
  // Each member other than "traceEvents": key (as written, quotes stripped) and its value's text.
  std::vector<std::pair<std::string_view, std::string_view>> members;
  bool has_events = false;
  // Slices of the events array: "{...},{...},...{...}" (whitespace between), without brackets.
  std::vector<std::string_view> batches;
  size_t events = 0;
  // The byte where the text stops in the middle of a value: the file was cut off. Events before it are whole.
  std::optional<uint64_t> truncated_at;
};

// Throws trace::TraceError(name, byte, what) when the text is not a JSON object with a well-formed structure.
TopLevel scan_top_level(std::string_view text, const std::string& name, size_t batch_bytes = 1 << 20);

// How deep objects and arrays nest in one JSON value's text (strings skipped): checked before a DOM parse,
// since copying, dumping and destroying a DOM recurse once per level.
int nesting_depth(std::string_view value);

}  // namespace shardscope::plugins
