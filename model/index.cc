#include "model/index.h"

#include <algorithm>
#include <unordered_map>

namespace shardscope::model {

const LaunchLink* RankIndex::launch_of(EventRef device) const {
  auto it = std::lower_bound(launches.begin(), launches.end(), device, [](const LaunchLink& l, EventRef d) {
    return l.device.track != d.track ? l.device.track < d.track : l.device.index < d.index;
  });
  return it != launches.end() && it->device == device ? &*it : nullptr;
}

RankIndex index_rank(const Rank& rank) {
  RankIndex out;
  out.depth.resize(rank.tracks.size());
  // Host events by start time, for finding launches: the last (innermost, since a parent precedes its
  // children on a track) host event starting at each instant.
  std::unordered_map<int64_t, EventRef> host_at;
  for (uint32_t t = 0; t < rank.tracks.size(); ++t) {
    const std::vector<Event>& events = rank.tracks[t].events;
    std::vector<uint16_t>& depth = out.depth[t];
    depth.resize(events.size());
    std::vector<int64_t> open;  // ends of the ranges enclosing the current event, innermost last
    for (uint32_t i = 0; i < events.size(); ++i) {
      const Event& e = events[i];
      while (!open.empty() && open.back() <= e.ts_ns) open.pop_back();
      depth[i] = uint16_t(std::min<size_t>(open.size(), UINT16_MAX));
      out.max_depth = std::max(out.max_depth, depth[i]);
      if (e.ph == 'X' && e.dur_ns > 0) open.push_back(e.end_ns());
      if (!e.is_device()) host_at[e.ts_ns] = {t, i};
    }
  }
  for (uint32_t t = 0; t < rank.tracks.size(); ++t) {
    const std::vector<Event>& events = rank.tracks[t].events;
    for (uint32_t i = 0; i < events.size(); ++i) {
      const Event& e = events[i];
      if (!e.is_device() || e.issued_ns == kUnknown) continue;
      if (auto h = host_at.find(e.issued_ns); h != host_at.end()) out.launches.push_back({h->second, {t, i}});
    }
  }
  return out;
}

}  // namespace shardscope::model
