// Reads a shardscope trace file (plain or gzip). A file cut off anywhere loads up to its last complete event
// and says where the cut was; anything else that is wrong throws TraceError naming the file and byte.
#pragma once

#include <cstdint>
#include <filesystem>
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
  std::vector<Event> events;  // in file order
  std::optional<Truncation> truncated;
  uint64_t json_bytes = 0;
  bool gzip = false;
};

// Parses JSON text already in memory; `name` is used in messages.
TraceFile parse_trace(std::string_view json, const std::string& name);

// Reads and parses a file; a ".gz" file (or one starting with the gzip magic) is inflated first.
TraceFile read_trace(const std::filesystem::path& path);

// Reads a whole file, inflating gzip. A gzip stream cut short yields what inflated before the cut.
// Throws TraceError when the file is missing, unreadable, or its compressed data is corrupt.
std::string read_file_text(const std::filesystem::path& path, bool* was_gzip = nullptr);

}  // namespace shardscope::trace
