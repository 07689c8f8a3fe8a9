#include "plugins/kineto/fsdp_labels.h"

#include <algorithm>
#include <map>
#include <string>

#include "plugins/kineto/kineto_keys.h"
#include "tracer/format/keys.h"

namespace shardscope::plugins {
namespace {

// FSDP2's labels (torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py: _with_fqn).
constexpr std::string_view kPrefix = "FSDP::";
constexpr std::string_view kAllGather = "FSDP::all_gather";
constexpr std::string_view kPreForward = "FSDP::pre_forward";
constexpr std::string_view kPreBackward = "FSDP::pre_backward";
constexpr std::string_view kPostBackward = "FSDP::post_backward";  // also matches _reduce and _reshard
constexpr const char* kDerivedCategory = "fsdp";

struct Label {
  std::string_view kind;  // "FSDP::all_gather"
  std::string_view fqn;   // "layers.3"
};

// "FSDP::all_gather (layers.3)" -> {"FSDP::all_gather", "layers.3"}; anything else has no fqn.
Label parse(std::string_view name) {
  if (name.substr(0, kPrefix.size()) != kPrefix || name.empty() || name.back() != ')') return {};
  size_t open = name.rfind(" (");
  if (open == std::string_view::npos) return {};
  return {name.substr(0, open), name.substr(open + 2, name.size() - open - 3)};
}

struct Window {
  int64_t ts, end;
  int unit;
};

}  // namespace

size_t derive_fsdp_units(model::Rank& rank, std::vector<model::Event>& events, std::vector<uint32_t>& track_of) {
  std::map<std::string, int> unit_of;
  std::vector<std::pair<int64_t, std::string>> first_seen;
  std::vector<Window> gathers, pre_backward, post_backward;
  std::vector<std::pair<Label, const model::Event*>> labels;
  for (const model::Event& e : events) {
    if (e.is_device() || e.ph != 'X') continue;
    Label l = parse(rank.str(e.name));
    if (l.fqn.empty()) continue;
    labels.push_back({l, &e});
  }
  if (labels.empty()) return 0;
  // Units numbered in forward order (the first label naming each module), so backward runs them downwards.
  std::sort(labels.begin(), labels.end(), [](const auto& a, const auto& b) { return a.second->ts_ns < b.second->ts_ns; });
  for (const auto& [l, e] : labels)
    if (!unit_of.count(std::string(l.fqn))) unit_of.emplace(std::string(l.fqn), int(unit_of.size()));
  for (const auto& [l, e] : labels) {
    Window w{e->ts_ns, e->end_ns(), unit_of.at(std::string(l.fqn))};
    if (l.kind == kAllGather) gathers.push_back(w);
    else if (l.kind == kPreBackward) pre_backward.push_back(w);
    else if (l.kind.substr(0, kPostBackward.size()) == kPostBackward) post_backward.push_back(w);
  }
  (void)kPreForward;

  // Each all-gather kernel belongs to the innermost "FSDP::all_gather (fqn)" range around its launch.
  std::vector<std::pair<int64_t, size_t>> compute_by_launch;
  for (size_t i = 0; i < events.size(); ++i) {
    model::Event& e = events[i];
    if (!e.is_device() || e.issued_ns == model::kUnknown) continue;
    if (e.cls == model::IntervalClass::Compute) compute_by_launch.push_back({e.issued_ns, i});
    if (e.cls != model::IntervalClass::Communication || e.coll != model::CollectiveKind::AllGather) continue;
    const Window* best = nullptr;
    for (const Window& w : gathers)
      if (w.ts <= e.issued_ns && e.issued_ns < w.end && (!best || w.ts >= best->ts)) best = &w;
    if (best) e.unit = best->unit;
  }
  std::sort(compute_by_launch.begin(), compute_by_launch.end());

  // A unit's backward compute: the compute kernels launched after its pre-backward hook and before its
  // post-backward hook; on the device, from the first one's start to the last one's end.
  std::vector<model::Event> derived;
  model::StringId bc_name = rank.strings.intern(keys::kUnitBackward), cat = rank.strings.intern(kDerivedCategory),
                  phase_name = rank.strings.intern(keys::kBackwardPhase);
  for (const Window& p : pre_backward) {
    int64_t until = INT64_MAX;
    for (const Window& q : post_backward)
      if (q.unit == p.unit && q.ts >= p.end) until = std::min(until, q.ts);
    auto it = std::lower_bound(compute_by_launch.begin(), compute_by_launch.end(), std::make_pair(p.end, size_t(0)));
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (; it != compute_by_launch.end() && it->first < until; ++it) {
      const model::Event& k = events[it->second];
      lo = std::min(lo, k.ts_ns);
      hi = std::max(hi, k.end_ns());
    }
    if (lo == INT64_MAX) continue;
    model::Event bc;
    bc.name = bc_name;
    bc.cat = cat;
    bc.unit = p.unit;
    bc.ts_ns = lo;
    bc.dur_ns = hi - lo;
    derived.push_back(bc);
  }
  // A backward pass starts at a pre-backward hook that follows the last one by more than the gap between
  // steps would allow: here, simply every pre-backward hook of the highest-numbered unit seen first.
  std::vector<Window> starts;
  for (size_t i = 0; i < pre_backward.size(); ++i) {
    bool first_of_pass = i == 0;
    if (!first_of_pass) {
      // A forward label between two pre-backward hooks means a new iteration began.
      for (const auto& [l, e] : labels)
        if (l.kind != kPreBackward && l.kind.substr(0, kPostBackward.size()) != kPostBackward && l.kind != kAllGather && e->ts_ns > pre_backward[i - 1].ts &&
            e->ts_ns < pre_backward[i].ts)
          first_of_pass = true;
    }
    if (first_of_pass) starts.push_back(pre_backward[i]);
  }
  for (const Window& s : starts) {
    model::Event ph;
    ph.name = phase_name;
    ph.cat = cat;
    ph.ts_ns = s.ts;
    ph.dur_ns = 0;
    derived.push_back(ph);
  }
  if (derived.empty()) return unit_of.size();
  uint32_t track = uint32_t(rank.tracks.size());
  rank.tracks.push_back(model::Track{-1, -1, "FSDP units (from PyTorch labels)", model::TrackKind::HostThread, {}});
  for (model::Event& d : derived) {
    events.push_back(d);
    track_of.push_back(track);
  }
  std::vector<std::string> names(unit_of.size());
  for (const auto& [fqn, id] : unit_of) names[size_t(id)] = fqn;
  rank.metadata[kineto_keys::kFsdpUnits] = names;
  return unit_of.size();
}

}  // namespace shardscope::plugins
