// Reads a shardscope trace file (plain or gzip). A file cut off anywhere loads up to its last complete event
// and says where the cut was; anything else that is wrong throws TraceError naming the file and byte.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracer/format/event.h"

namespace shardscope::trace {

struct Truncation {
  uint64_t offset = 0;  // byte of the JSON text where it ends (of the inflated text for .gz files)
  std::string detail;   // what the parser expected there
};

struct TraceFile {
  std::string name;
  nlohmann::json shardscope;  // the top-level object, with later shardscope_metadata patches merged in
  std::vector<Event> events;  // in file order (empty when they went to an EventSink)
  size_t event_count = 0;     // events read, kept or sent
  std::optional<Truncation> truncated;
  uint64_t json_bytes = 0;
  bool gzip = false;
};

// Parses JSON text already in memory; `name` is used in messages.
TraceFile parse_trace(std::string_view json, const std::string& name);

// Takes each event as it is read, in file order. Errors still come as TraceError, possibly after events were
// sent (the header is checked at the end: it may follow the events).
using EventSink = std::function<void(Event&&)>;

// As above, each event going to `sink` instead of TraceFile::events: a caller that builds its own model never
// holds every event as an Event with JSON args at once.
TraceFile parse_trace(std::string_view json, const std::string& name, const EventSink& sink);

// For tests: how much text the events array is read in at a time (a batch, one simdjson document; the SAX
// parse reads again one that it cannot), so that small files cross batches. 0: the default (256 kB).
void set_events_batch_bytes(size_t bytes);

// Reads and parses a file; a ".gz" file (or one starting with the gzip magic) is inflated first.
TraceFile read_trace(const std::filesystem::path& path);

// Reads a whole file, inflating gzip. A gzip stream cut short yields what inflated before the cut.
// Throws TraceError when the file is missing, unreadable, not a regular file, over limits().max_text_bytes
// (plain or inflated), or its compressed data is corrupt.
std::string read_file_text(const std::filesystem::path& path, bool* was_gzip = nullptr);

// Opens a regular file read-only and returns its descriptor (and size). A directory, FIFO, device or
// socket is refused by name before it is opened (a FIFO's open or read may never return), and so is a
// file over max_text_bytes().
int open_regular(const std::filesystem::path& path, uint64_t* size);

// Inflates gzip data (every member) into `out`, streaming: the buffer grows with the output, never from
// what the trailer claims, and more than max_text_bytes() of output is a TraceError. Returns the
// compressed byte where the stream stopped when it was cut short (`out` then holds what inflated before).
std::optional<uint64_t> inflate_gzip(std::string_view raw, const std::string& name, std::string& out,
                                     size_t size_hint = 0);

}  // namespace shardscope::trace
