// Writes a trace file incrementally: the header first, then complete events, so that whatever reaches the
// disk before a crash is a loadable prefix. A path ending in ".gz" is gzip-compressed, sync-flushed at each
// flush() so the compressed prefix inflates too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tracer/format/event.h"

namespace shardscope::trace {

class Writer {
 public:
  // Throws TraceError when the file cannot be created. `shardscope` is the top-level shardscope object.
  Writer(const std::filesystem::path& path, const nlohmann::json& shardscope);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void append(const Event& e);
  // One event already serialized as a JSON object (see serialize.h), without separators.
  void append_serialized(std::string_view event_json);
  // Hands every appended event to the kernel: after it returns, a SIGKILL loses none of them.
  void flush();
  // Writes the closing brackets and closes the file; further appends throw.
  void close();

  uint64_t events_written() const { return events_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  class Sink;
  std::filesystem::path path_;
  std::unique_ptr<Sink> sink_;
  std::string pending_;
  uint64_t events_ = 0;
};

}  // namespace shardscope::trace
