// The one error type of the trace-file layer: what went wrong, in which file, at which byte.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace shardscope::trace {

class TraceError : public std::runtime_error {
 public:
  TraceError(std::string file, uint64_t offset, std::string what)
      : std::runtime_error(file + ": at byte " + std::to_string(offset) + ": " + what),
        file_(std::move(file)), offset_(offset) {}
  const std::string& file() const { return file_; }
  // The byte (0-based, of the JSON text) where the problem is: the first offending character of a syntax
  // error, the '{' of a bad event or header, the key of a bad top-level value, the end for a missing part.
  uint64_t offset() const { return offset_; }

 private:
  std::string file_;
  uint64_t offset_;
};

}  // namespace shardscope::trace
