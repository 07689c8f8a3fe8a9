// Text primitives of the trace file: times as microseconds with 3 decimals (exact to the nanosecond), JSON
// strings, whole events. Shared by the file writer and the host tracer's flusher.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tracer/format/event.h"

namespace shardscope::trace {

// Appends ns as microseconds with exactly 3 decimals: 1234567 -> "1234.567", -5 -> "-0.005".
void append_us(std::string& out, int64_t ns);

// Parses a JSON number written in microseconds into integer nanoseconds without going through a double when
// the text has at most 3 decimals (the common case); falls back to rounding otherwise. nullopt if not a number.
std::optional<int64_t> parse_us(std::string_view text);

// Appends s as a JSON string literal, quotes included. Invalid UTF-8 is replaced, never thrown on.
void append_json_string(std::string& out, std::string_view s);

// Appends one event as a single-line JSON object.
void append_event(std::string& out, const Event& e);

}  // namespace shardscope::trace
