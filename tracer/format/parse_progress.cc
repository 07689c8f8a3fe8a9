#include "tracer/format/parse_progress.h"

namespace shardscope::trace {
namespace {
thread_local const ParseHook* current = nullptr;
}

ParseProgressScope::ParseProgressScope(const ParseHook* hook) : previous_(current) { current = hook; }
ParseProgressScope::~ParseProgressScope() { current = previous_; }

void parse_progress(uint64_t text_bytes, uint64_t events) {
  if (current && *current) (*current)(text_bytes, events);
}

}  // namespace shardscope::trace
