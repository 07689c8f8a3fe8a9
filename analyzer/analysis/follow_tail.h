// Reads a shardscope trace file while its writer is still appending to it (tracer/format/writer.h): each
// poll hands over the events that became whole since the last one, and keeps only the text of a record the
// writer has not finished. The writer puts one event a line and flushes whole lines (a gzip file
// sync-flushed), so a record is whole once the line after it has begun; a file cut anywhere is read up to
// its last whole record, never an error. Text that is no trace at all is a trace::TraceError naming file
// and byte.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracer/format/event.h"

namespace shardscope::analysis {

class TraceTail {
 public:
  explicit TraceTail(std::filesystem::path path);
  ~TraceTail();
  TraceTail(const TraceTail&) = delete;
  TraceTail& operator=(const TraceTail&) = delete;

  // The events whose records became whole since the last call, in file order ("shardscope_metadata"
  // patches go into header() instead). A file that does not exist yet, or holds no whole header, gives none.
  std::vector<trace::Event> poll();
  // The header ("shardscope" object, later patches merged); null until its text is whole.
  const nlohmann::json& header() const { return header_; }
  // The writer closed the file: its closing brackets were read.
  bool complete() const { return complete_; }
  const std::filesystem::path& path() const { return path_; }
  // Text read but not yet a whole record (what a cut file leaves behind), in bytes.
  size_t pending_bytes() const { return text_.size(); }

 private:
  void read_more();
  void take_header();
  std::vector<trace::Event> poll_whole(size_t last_nl);
  std::vector<trace::Event> parse_lines(const std::vector<std::string_view>& lines, uint64_t first_offset);
  class Inflater;
  std::filesystem::path path_;
  std::string name_;
  int fd_ = -1;
  uint64_t raw_offset_ = 0;   // bytes of the file read
  uint64_t text_offset_ = 0;  // where text_ starts in the (inflated) text
  std::unique_ptr<Inflater> gz_;
  bool sniffed_ = false;
  std::string text_;  // read, not yet consumed
  nlohmann::json header_;
  bool complete_ = false;
};

}  // namespace shardscope::analysis
