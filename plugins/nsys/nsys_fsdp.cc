#include "plugins/nsys/nsys_fsdp.h"

#include <algorithm>
#include <unordered_map>

#include "model/steps.h"
#include "plugins/common/fsdp_labels.h"

namespace shardscope::nsys {

bool has_fsdp_labels(const model::Rank& r) {
  for (model::StringId id = 0; id < r.strings.size(); ++id) {
    std::string_view s = r.str(id);
    if (s.starts_with("FSDP::") || s.starts_with("FullyShardedDataParallel.")) return true;
  }
  return false;
}

size_t derive_units(model::Rank& rank, const std::vector<std::pair<int64_t, int64_t>>& calls) {
  if (!has_fsdp_labels(rank)) return 0;
  // The units hang on steps (a hook's step bounds its backward), so the ProfilerStep ranges become steps here,
  // as Kineto's importer makes them, before the loader would.
  if (rank.steps.empty()) {
    std::vector<model::Step> steps = model::steps_matching(rank, model::StepPattern());
    if (!steps.empty()) {
      model::set_steps(rank, std::move(steps), true);
      rank.step_rule = model::StepRule::NamedRanges;
    }
  }
  std::unordered_map<int64_t, uint32_t> host_track;  // tid -> track
  for (uint32_t t = 0; t < rank.tracks.size(); ++t)
    if (rank.tracks[t].kind == model::TrackKind::HostThread) host_track.emplace(rank.tracks[t].tid, t);
  // The rank's events in one array with their tracks, and each device event's launching thread's track.
  std::vector<model::Event> events;
  std::vector<uint32_t> track_of;
  std::vector<plugins::Launch> launches;
  events.reserve(rank.event_count());
  for (uint32_t t = 0; t < rank.tracks.size(); ++t)
    for (const model::Event& e : rank.tracks[t].events) {
      if (e.is_device() && e.issued_ns != model::kUnknown) {
        auto c = std::lower_bound(calls.begin(), calls.end(), std::pair(e.issued_ns, INT64_MIN));
        if (c != calls.end() && c->first == e.issued_ns)
          if (auto h = host_track.find(c->second); h != host_track.end())
            launches.push_back({uint32_t(events.size()), h->second});
      }
      events.push_back(e);
      track_of.push_back(t);
    }
  const size_t before = events.size();
  const size_t tracks_before = rank.tracks.size();
  const size_t units = plugins::derive_fsdp_units(rank, events, track_of, launches);
  if (units == 0) return 0;
  // The units it gave the all-gathers, back onto the tracks; what it derived, onto its own track.
  size_t i = 0;
  for (uint32_t t = 0; t < tracks_before; ++t)
    for (model::Event& e : rank.tracks[t].events) e.unit = events[i++].unit;
  for (size_t k = before; k < events.size(); ++k) rank.tracks[track_of[k]].events.push_back(events[k]);
  for (size_t t = tracks_before; t < rank.tracks.size(); ++t) model::sort_events(rank.tracks[t].events);
  return units;
}

}  // namespace shardscope::nsys
