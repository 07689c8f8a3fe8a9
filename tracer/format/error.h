// The one error type of the trace-file layer: what went wrong, in which file, at which byte.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "tracer/format/printable.h"

namespace shardscope::trace {

class TraceError : public std::runtime_error {
 public:
  // The message quotes the file and the detail printable (printable.h): a 100 MB number in a parser's
  // message, or a newline in a file name, stays one short line.
  TraceError(std::string file, uint64_t offset, const std::string& what)
      : std::runtime_error(printable(file, kMaxQuotedBytes) + ": at byte " + std::to_string(offset) + ": " +
                           printable(what, kMaxQuotedBytes)),
        file_(std::move(file)),
        offset_(offset) {}
  const std::string& file() const { return file_; }
  // The byte (0-based, of the JSON text) where the problem is: the first offending character of a syntax
  // error, the '{' of a bad event or header, the key of a bad top-level value, the end for a missing part.
  uint64_t offset() const { return offset_; }

 private:
  std::string file_;
  uint64_t offset_;
};

}  // namespace shardscope::trace
