#include "viewer/model/run_memory.h"

#include <malloc.h>

namespace shardscope::viewer {
namespace {

// A string in the table: its std::string in the deque, its heap buffer past the small-string size, and its
// node and bucket in the map from text to id (libstdc++: a node of next pointer, key, id and cached hash).
size_t string_table_bytes(const model::StringTable& t) {
  size_t b = 0;
  for (model::StringId id = 0; id < t.size(); ++id) {
    const size_t len = t.str(id).size();
    b += sizeof(std::string) + (len > 15 ? len + 1 : 0) + 40 + sizeof(void*);
  }
  return b;
}

}  // namespace

RunMemory run_memory(const analysis::AnalysedRun& run, const TimelineLayout& layout) {
  RunMemory m;
  for (const model::Rank& r : run.trace.ranks) {
    for (const model::Track& t : r.tracks) {
      m.events += t.events.size();
      m.event_bytes += t.events.capacity() * sizeof(model::Event);
    }
    m.string_bytes += string_table_bytes(r.strings);
    for (const model::CounterSeries& c : r.counters) m.other_bytes += c.samples.capacity() * sizeof(c.samples[0]);
    m.other_bytes += r.steps.capacity() * sizeof(model::Step) + r.clock_sync.capacity() * sizeof(model::ClockPair);
  }
  for (const model::EventArgs& a : run.trace.args) m.args_bytes += a.memory_bytes();
  const size_t side = layout.bytes();  // counts the args table too: taken out here, counted above
  m.side_bytes = side > m.args_bytes ? side - m.args_bytes : 0;
  return m;
}

void release_free_memory() { malloc_trim(0); }

}  // namespace shardscope::viewer
