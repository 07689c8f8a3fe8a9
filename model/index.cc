#include "model/index.h"

#include <algorithm>

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
  // The device events to find a launch for, by issue time.
  struct Want {
    int64_t at;
    EventRef device;
  };
  std::vector<Want> want;
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
      if (e.is_device() && e.issued_ns != kUnknown) want.push_back({e.issued_ns, {t, i}});
    }
  }
  std::sort(want.begin(), want.end(), [](const Want& a, const Want& b) { return a.at < b.at; });
  // Each host track is sorted by start, so one merge walk per track finds the host events that begin at
  // each wanted instant: no hash of every host event. A later one at the same instant is nested in the
  // earlier (a parent precedes its children), so the last one seen is the innermost.
  std::vector<EventRef> launch(want.size());
  std::vector<char> found(want.size(), 0);
  for (uint32_t t = 0; t < rank.tracks.size() && !want.empty(); ++t) {
    const std::vector<Event>& events = rank.tracks[t].events;
    size_t j = 0;
    for (uint32_t i = 0; i < events.size() && j < want.size(); ++i) {
      const Event& e = events[i];
      if (e.is_device()) continue;
      while (j < want.size() && want[j].at < e.ts_ns) ++j;
      for (size_t k = j; k < want.size() && want[k].at == e.ts_ns; ++k) launch[k] = {t, i}, found[k] = 1;
    }
  }
  for (size_t k = 0; k < want.size(); ++k)
    if (found[k]) out.launches.push_back({launch[k], want[k].device});
  std::sort(out.launches.begin(), out.launches.end(), [](const LaunchLink& a, const LaunchLink& b) {
    return a.device.track != b.device.track ? a.device.track < b.device.track : a.device.index < b.device.index;
  });
  return out;
}

}  // namespace shardscope::model
