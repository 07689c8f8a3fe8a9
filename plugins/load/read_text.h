// Reads one trace file into memory, inflating gzip, with the padding a SIMD JSON parser needs after it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace shardscope::plugins {

struct FileText {
  std::string buffer;  // text followed by Input::kPadding zero bytes
  size_t size = 0;     // bytes of text
  bool gzip = false;
  std::optional<uint64_t> gzip_cut_at;  // the gzip stream stopped early (a file cut off mid-write)
  std::string_view text() const { return {buffer.data(), size}; }
};

// Throws trace::TraceError when the file is missing, unreadable or its gzip data is corrupt.
FileText read_text(const std::filesystem::path& path);

}  // namespace shardscope::plugins
