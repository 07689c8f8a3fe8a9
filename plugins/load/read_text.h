// Reads one trace file into memory: a plain file is read (not mapped: a file that shrinks under a mapping
// raises SIGBUS), a gzip file is inflated in one pass into a buffer of exactly its size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

namespace shardscope::plugins {

class TextWindow;

struct FileText {
  const char* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> owner;  // the buffer
  bool gzip = false;
  std::optional<uint64_t> gzip_cut_at;  // the gzip stream stopped early (a file cut off mid-write)
  // Set (read_text_window): only the head is read yet; the rest is read through the window as it is parsed,
  // by an importer that knows it (Kineto's), never by another. `owner` owns it.
  TextWindow* window = nullptr;
  std::string_view text() const { return {data, size}; }
};

// Throws trace::TraceError when the file is missing, unreadable or its gzip data is corrupt.
FileText read_text(const std::filesystem::path& path);

// A plain file through a TextWindow (its first 64 KiB read); read whole (read_text) where no window can be
// had. For the Kineto importer only.
FileText read_text_window(const std::filesystem::path& path);

}  // namespace shardscope::plugins
