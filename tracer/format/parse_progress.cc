#include "tracer/format/parse_progress.h"

#include <sys/mman.h>
#include <unistd.h>

namespace shardscope::trace {
namespace {
thread_local const ParseHook* current = nullptr;
thread_local std::string_view consumed;
}  // namespace

ParseProgressScope::ParseProgressScope(const ParseHook* hook) : previous_(current) { current = hook; }
ParseProgressScope::~ParseProgressScope() { current = previous_; }

void parse_progress(uint64_t text_bytes, uint64_t events) {
  if (current && *current) (*current)(text_bytes, events);
}

ConsumedTextScope::ConsumedTextScope(const char* data, size_t size) : previous_(consumed) {
  consumed = std::string_view(data, size);
}
ConsumedTextScope::~ConsumedTextScope() { consumed = previous_; }

bool text_consumed(std::string_view text) {
  return !consumed.empty() && text.data() >= consumed.data() &&
         text.data() + text.size() <= consumed.data() + consumed.size();
}

const char* discard_pages(const char* from, const char* to) {
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (uintptr_t(from) + page - 1) & ~(page - 1), end = uintptr_t(to) & ~(page - 1);
  if (end <= begin) return from;
  // Failing (a mapping that refuses it) only leaves the pages resident.
  madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  return reinterpret_cast<const char*>(end);
}

}  // namespace shardscope::trace
