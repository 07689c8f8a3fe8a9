// What a timeline needs beside the events, derived from a loaded rank and kept in side tables, so the
// 56-byte event and the importer interface (plugins/api/importer.h) stay as they are: each event's nesting
// depth on its track, and each device event's launch (the host event that issued it).
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace shardscope::model {

// An event by place: rank.tracks[track].events[index].
struct EventRef {
  uint32_t track = 0;
  uint32_t index = 0;
  bool operator==(const EventRef&) const = default;
};

struct LaunchLink {
  EventRef launch;  // the host event (a CUDA API call, a cudaLaunchKernel op, a collective's host range)
  EventRef device;  // the device event it started
};

struct RankIndex {
  // depth[t][i]: how many ranges of track t enclose event i (0: top level). Ranges that overlap without
  // nesting (async work on one stream) count as enclosing only while they hold the event's start.
  std::vector<std::vector<uint16_t>> depth;
  std::vector<LaunchLink> launches;  // sorted by device event; one per device event whose launch was found
  uint16_t max_depth = 0;

  // The launch of a device event, or nullptr.
  const LaunchLink* launch_of(EventRef device) const;
};

// Builds the side tables of a finalized rank. A device event's launch is the host event that begins at its
// issued_ns (importers set issued_ns to the launch's start: Kineto's correlation, CUPTI's correlation id, the
// trainer's issue time); among several, the innermost.
RankIndex index_rank(const Rank& rank);

}  // namespace shardscope::model
