// Bounds on what a trace file may make the readers do, so that a hostile or broken file ends in one clear
// error instead of a stack overflow, an allocation of what a gzip trailer claims, or a read that never ends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shardscope::trace {

struct Limits {
  // The JSON text, after inflating: a file (or its gzip stream) larger than this is refused.
  // 0: default_max_text_bytes().
  uint64_t max_text_bytes = 0;
  // Objects and arrays nested deeper than this (anywhere in the file): the header and args are built as
  // nlohmann values, whose copy, dump and destruction recurse.
  int max_depth = 128;
  // One string (a name, a key, an args value): real ones are at most kilobytes (long kernel names, stacks).
  uint64_t max_string_bytes = 16ull << 20;
  // Events in one file.
  uint64_t max_events = 1ull << 28;
};

// The process-wide limits (the CLI sets max_text_bytes from --max-trace-bytes before it loads anything).
Limits& limits();

// 4 GiB, or an eighth of the memory this process may use (physical memory, RLIMIT_AS, RLIMIT_DATA) when
// that is less: the model of a trace takes a few times its text, so a larger text would end in bad_alloc.
uint64_t default_max_text_bytes();

// The text limit in force: limits().max_text_bytes, or the default.
uint64_t max_text_bytes();

// A size as --max-trace-bytes takes it, in the CLI and the viewer alike: a whole number of bytes, or with a K,
// M, G, T, P or E suffix in powers of 1024 (64MiB, 16G, 512kb, 30k; a trailing B or b alone is bytes), spaces
// around it ignored. Nothing for 0, a sign, a fraction, another suffix or a size past 64 bits.
std::optional<uint64_t> parse_bytes(std::string_view text);

// "4 GiB", "512 MiB", "1000 bytes": for messages.
std::string show_bytes(uint64_t n);

}  // namespace shardscope::trace
