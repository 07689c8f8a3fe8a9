// A fast structural pass over a Chrome-trace JSON object: finds its top-level members and hands each
// "traceEvents" array to a callback that cuts it into whole events (event_chunks.h). The format's other form,
// a bare array of events (PyTorch's legacy profiler writes it), is handed over whole. Only brackets and
// strings matter for finding where a value ends; the batch parser checks everything else.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardscope::plugins {

class TextWindow;

// Each helper returns nullptr when the text ends first.
const char* skip_space(const char* p, const char* end);
const char* skip_string(const char* p, const char* end);     // p at '"': after the closing quote
const char* skip_container(const char* p, const char* end);  // p at '{' or '[': after its match

// Where an events array ends: after its ']', or, when the text stops inside it, nullptr and the byte of
// the cut (the start of the event left unfinished, or the text's end).
struct ArrayEnd {
  const char* end = nullptr;
  uint64_t truncated_at = 0;
};

struct TopLevel {
  // Each member other than "traceEvents": key (as written, quotes stripped) and its value's text.
  std::vector<std::pair<std::string_view, std::string_view>> members;
  bool has_events = false;
  bool bare_array = false;  // the top level is the events array itself (the JSON Array Format): no members
  // The byte where the text stops in the middle of a value: the file was cut off. Events before it are whole.
  std::optional<uint64_t> truncated_at;
};

// `on_events(begin, so_far)` is called for each "traceEvents" array, `begin` just after its '[', with the
// members seen before it; for a bare array, once, `begin` just after the top-level '['. Throws
// trace::TraceError(name, byte, what) when the text is neither a JSON object with a well-formed structure nor
// an array. With a window (`text` its whole range), the text is read on as far as the scan goes.
using EventsCallback = std::function<ArrayEnd(const char* begin, const TopLevel& so_far)>;
TopLevel scan_top_level(std::string_view text, const std::string& name, const EventsCallback& on_events,
                        TextWindow* window = nullptr);

// How deep objects and arrays nest in one JSON value's text (strings skipped): checked before a DOM parse,
// since copying, dumping and destroying a DOM recurse once per level.
int nesting_depth(std::string_view value);

}  // namespace shardscope::plugins
