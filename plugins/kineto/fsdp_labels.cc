#include "plugins/kineto/fsdp_labels.h"

#include <algorithm>

#include "plugins/kineto/fsdp_units.h"
#include "plugins/kineto/kineto_keys.h"
#include "tracer/format/keys.h"

namespace shardscope::plugins {
namespace {

constexpr const char* kDerivedCategory = "fsdp";

model::Event derived(model::StringId name, model::StringId cat, int unit, int64_t ts, int64_t dur) {
  model::Event e;
  e.name = name;
  e.cat = cat;
  e.unit = unit;
  e.ts_ns = ts;
  e.dur_ns = dur;
  return e;
}

}  // namespace

size_t derive_fsdp_units(model::Rank& rank, std::vector<model::Event>& events, std::vector<uint32_t>& track_of) {
  std::vector<HostLabel> labels;
  for (size_t i = 0; i < events.size(); ++i) {
    const model::Event& e = events[i];
    if (e.is_device() || e.ph != 'X') continue;
    std::string_view name = rank.str(e.name);
    if (name.substr(0, 6) == "FSDP::" || name.substr(0, 25) == "FullyShardedDataParallel.") labels.push_back({name, e.ts_ns, e.end_ns(), track_of[i]});
  }
  if (labels.empty()) return 0;
  // Parents before children, so that nesting reads in order.
  std::sort(labels.begin(), labels.end(), [](const HostLabel& a, const HostLabel& b) { return a.ts != b.ts ? a.ts < b.ts : a.end > b.end; });
  std::optional<UnitLabels> found = fsdp2_units(labels);
  if (!found) found = fsdp1_units(labels, rank.steps);
  if (!found) return 0;
  const UnitLabels& u = *found;

  // Each all-gather kernel belongs to the innermost unit window around its launch.
  std::vector<std::pair<int64_t, size_t>> compute_by_launch;
  for (size_t i = 0; i < events.size(); ++i) {
    model::Event& e = events[i];
    if (!e.is_device() || e.issued_ns == model::kUnknown) continue;
    if (e.cls == model::IntervalClass::Compute) compute_by_launch.push_back({e.issued_ns, i});
    if (e.cls != model::IntervalClass::Communication || e.coll != model::CollectiveKind::AllGather) continue;
    const UnitWindow* best = nullptr;
    for (const UnitWindow& w : u.gathers)
      if (w.ts <= e.issued_ns && e.issued_ns < w.end && (!best || w.ts >= best->ts)) best = &w;
    if (best) e.unit = best->unit;
  }
  std::sort(compute_by_launch.begin(), compute_by_launch.end());

  // A unit's backward compute: the compute kernels launched after its pre-backward hook and before its
  // post-backward hook (or the next unit's pre-backward hook); on the device, from the first one's start to
  // the last one's end.
  std::vector<model::Event> out;
  model::StringId bc_name = rank.strings.intern(keys::kUnitBackward), cat = rank.strings.intern(kDerivedCategory),
                  phase_name = rank.strings.intern(keys::kBackwardPhase), limited = rank.strings.intern(keys::kRateLimited);
  for (const UnitWindow& p : u.pre_backward) {
    int64_t until = INT64_MAX;
    for (const UnitWindow& q : u.post_backward)
      if (q.unit == p.unit && q.ts >= p.end) until = std::min(until, q.ts);
    for (const UnitWindow& q : u.pre_backward)
      if (q.ts > p.ts) until = std::min(until, q.ts);
    auto it = std::lower_bound(compute_by_launch.begin(), compute_by_launch.end(), std::make_pair(p.end, size_t(0)));
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (; it != compute_by_launch.end() && it->first < until; ++it) {
      const model::Event& k = events[it->second];
      lo = std::min(lo, k.ts_ns);
      hi = std::max(hi, k.end_ns());
    }
    if (lo != INT64_MAX) out.push_back(derived(bc_name, cat, p.unit, lo, hi - lo));
  }
  for (int64_t s : u.backward_starts) out.push_back(derived(phase_name, cat, -1, s, 0));
  for (const UnitWindow& r : u.rate_limited) {
    model::Event e = derived(limited, cat, r.unit, r.ts, 0);
    e.ph = 'i';
    e.flags = model::kInstant;
    out.push_back(e);
  }
  if (!out.empty()) {
    uint32_t track = uint32_t(rank.tracks.size());
    rank.tracks.push_back(model::Track{-1, -1, "FSDP units (from PyTorch labels)", model::TrackKind::HostThread, {}});
    for (model::Event& d : out) {
      events.push_back(d);
      track_of.push_back(track);
    }
  }
  rank.metadata[kineto_keys::kFsdpUnits] = u.names;
  if (!u.identity.empty()) rank.metadata[keys::report::kUnitIdentity] = u.identity;
  return u.names.size();
}

}  // namespace shardscope::plugins
