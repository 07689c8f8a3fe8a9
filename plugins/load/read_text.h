// Reads one trace file into memory: a plain file is read (not mapped: a file that shrinks under a mapping
// raises SIGBUS), a gzip file is inflated in one pass into a buffer of exactly its size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

namespace shardscope::plugins {

struct FileText {
  const char* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> owner;  // the buffer
  bool gzip = false;
  std::optional<uint64_t> gzip_cut_at;  // the gzip stream stopped early (a file cut off mid-write)
  std::string_view text() const { return {data, size}; }
};

// Throws trace::TraceError when the file is missing, unreadable or its gzip data is corrupt.
FileText read_text(const std::filesystem::path& path);

}  // namespace shardscope::plugins
