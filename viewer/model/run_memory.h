// What an open run holds in memory, counted from its containers (deterministic, unlike RSS): the model's
// events, string tables, counters and steps, the args table and the timeline's side tables. The viewer's
// budget is 150 bytes an event (docs/viewer.md); tests check it on a generated run.
#pragma once

#include <cstddef>

#include "analyzer/analysis/run.h"
#include "viewer/model/timeline_layout.h"

namespace shardscope::viewer {

struct RunMemory {
  size_t events = 0;
  size_t event_bytes = 0;   // the tracks' event vectors (model::Event, 64 bytes each, by capacity)
  size_t string_bytes = 0;  // the ranks' string tables: the strings and the map from text to id
  size_t args_bytes = 0;    // each event's args (model::EventArgs)
  size_t other_bytes = 0;   // counters' samples, steps, clock pairs
  size_t side_bytes = 0;    // the timeline's side tables beyond the args (TimelineLayout::bytes)
  size_t total() const { return event_bytes + string_bytes + args_bytes + other_bytes + side_bytes; }
  double per_event() const { return events ? double(total()) / double(events) : 0.0; }
};

RunMemory run_memory(const analysis::AnalysedRun& run, const TimelineLayout& layout);

// Hands the heap's free pages back to the system after a load: the parse's temporaries (a file's text, the
// JSON values of its events) are freed by then, but the allocator keeps their pages, between the model's
// blocks, counted in the process's resident memory.
void release_free_memory();

}  // namespace shardscope::viewer
