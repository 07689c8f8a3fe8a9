#include "plugins/common/fsdp_labels.h"

#include <algorithm>
#include <tuple>

#include "model/saturating.h"
#include "plugins/common/fsdp_units.h"
#include "plugins/kineto/kineto_keys.h"
#include "tracer/format/keys.h"

namespace shardscope::plugins {
namespace {

constexpr const char* kDerivedCategory = "fsdp";

model::Event derived(model::StringId name, model::StringId cat, int unit, int64_t ts, int64_t dur, int32_t step) {
  model::Event e;
  e.name = name;
  e.cat = cat;
  e.unit = unit;
  e.ts_ns = ts;
  e.dur_ns = dur;
  e.step = step;
  return e;
}

bool is_fsdp_label(std::string_view name) {
  return name.substr(0, 6) == "FSDP::" || name.substr(0, 25) == "FullyShardedDataParallel.";
}

// The ProfilerStep whose host range holds ts (rank.steps are sorted by host start), -1 none.
int32_t step_at(const std::vector<model::Step>& steps, int64_t ts) {
  auto it = std::upper_bound(steps.begin(), steps.end(), ts,
                             [](int64_t t, const model::Step& s) { return t < s.host_start_ns; });
  if (it == steps.begin()) return -1;
  --it;
  return ts < it->host_end_ns ? int32_t(it - steps.begin()) : -1;
}

// A point on a thread: a launch call, a label's start.
struct Query {
  uint32_t track;
  int64_t t;
  size_t index;  // the caller's
  bool operator<(const Query& o) const { return std::tie(track, t) < std::tie(o.track, o.t); }
};

// For each query, the unit of the innermost window on the same track that holds it (the one that began
// last), -1 none; results by the query's index (each below `results`). Record_function ranges nest on one thread, so one sweep
// with a stack of open windows answers them all: O((windows + queries) log).
std::vector<int> innermost_units(std::vector<UnitWindow> windows, std::vector<Query> queries, size_t results) {
  std::sort(windows.begin(), windows.end(), [](const UnitWindow& a, const UnitWindow& b) {
    return std::tie(a.track, a.ts) != std::tie(b.track, b.ts) ? std::tie(a.track, a.ts) < std::tie(b.track, b.ts)
                                                              : a.end > b.end;
  });
  std::sort(queries.begin(), queries.end());
  std::vector<int> out(results, -1);
  std::vector<const UnitWindow*> open;
  size_t wi = 0;
  uint32_t track = UINT32_MAX;
  for (const Query& q : queries) {
    if (q.track != track) {
      open.clear();
      track = q.track;
      while (wi < windows.size() && windows[wi].track < track) ++wi;
    }
    for (; wi < windows.size() && windows[wi].track == track && windows[wi].ts <= q.t; ++wi) {
      while (!open.empty() && open.back()->end <= windows[wi].ts) open.pop_back();
      open.push_back(&windows[wi]);
    }
    while (!open.empty() && open.back()->end <= q.t) open.pop_back();
    if (!open.empty()) out[q.index] = open.back()->unit;
  }
  return out;
}

}  // namespace

size_t derive_fsdp_units(model::Rank& rank, std::vector<model::Event>& events, std::vector<uint32_t>& track_of,
                         const std::vector<Launch>& launches) {
  // Host labels only: Kineto's gpu_user_annotation copies of the same labels lie on the GPU streams, at
  // device times.
  const model::StringId gpu_annotation = rank.strings.find(kineto_keys::kCatGpuUserAnnotation);
  std::vector<int8_t> label_name(rank.strings.size(), -1);  // by name id: -1 not looked at yet, else 0/1
  std::vector<HostLabel> labels;
  for (size_t i = 0; i < events.size(); ++i) {
    const model::Event& e = events[i];
    if (e.is_device() || e.ph != 'X' || e.cat == gpu_annotation) continue;
    int8_t& is = label_name[e.name];
    if (is < 0) is = is_fsdp_label(rank.str(e.name));
    if (is) labels.push_back({rank.str(e.name), e.ts_ns, e.end_ns(), track_of[i], -1});
  }
  if (labels.empty()) return 0;
  // Parents before children, so that nesting reads in order.
  std::sort(labels.begin(), labels.end(),
            [](const HostLabel& a, const HostLabel& b) { return a.ts != b.ts ? a.ts < b.ts : a.end > b.end; });
  for (HostLabel& l : labels) l.step = step_at(rank.steps, l.ts);
  std::optional<UnitLabels> found = fsdp2_units(labels);
  if (!found) found = fsdp1_units(labels);
  if (!found) return 0;
  const UnitLabels& u = *found;

  // Each all-gather kernel belongs to the innermost unit window around its launch call, on the launching
  // thread. The compute kernels, by launching thread and launch time, give each unit's backward compute.
  std::vector<Query> gather_launches;
  std::vector<uint32_t> gather_events;
  std::vector<std::tuple<uint32_t, int64_t, uint32_t>> compute;  // (launch track, launch time, event)
  for (const Launch& l : launches) {
    const model::Event& e = events[l.event];
    if (e.issued_ns == model::kUnknown) continue;
    if (e.cls == model::IntervalClass::Compute) {
      compute.push_back({l.track, e.issued_ns, l.event});
    } else if (e.cls == model::IntervalClass::Communication && e.coll == model::CollectiveKind::AllGather) {
      gather_launches.push_back({l.track, e.issued_ns, gather_events.size()});
      gather_events.push_back(l.event);
    }
  }
  std::vector<int> gather_unit = innermost_units(u.gathers, std::move(gather_launches), gather_events.size());
  for (size_t i = 0; i < gather_events.size(); ++i) events[gather_events[i]].unit = gather_unit[i];
  std::sort(compute.begin(), compute.end());

  // A unit's backward compute: the compute kernels its thread launched after its pre-backward hook and
  // before the first of its own post-backward hook, the thread's next pre-backward hook and the end of the
  // step; on the device, from the first one's start to the last one's end.
  std::vector<model::Event> out;
  model::StringId bc_name = rank.strings.intern(keys::kUnitBackward), cat = rank.strings.intern(kDerivedCategory),
                  phase_name = rank.strings.intern(keys::kBackwardPhase),
                  limited = rank.strings.intern(keys::kRateLimited);
  auto by_track_ts = [](const UnitWindow& a, const UnitWindow& b) {
    return std::tie(a.track, a.ts) < std::tie(b.track, b.ts);
  };
  std::vector<UnitWindow> pre = u.pre_backward, post = u.post_backward;
  std::sort(pre.begin(), pre.end(), by_track_ts);
  std::sort(post.begin(), post.end(), [](const UnitWindow& a, const UnitWindow& b) {
    return std::tie(a.unit, a.track, a.ts) < std::tie(b.unit, b.track, b.ts);
  });
  for (size_t k = 0; k < pre.size(); ++k) {
    const UnitWindow& p = pre[k];
    int64_t until = INT64_MAX;
    if (k + 1 < pre.size() && pre[k + 1].track == p.track) until = pre[k + 1].ts;
    auto q = std::lower_bound(post.begin(), post.end(), std::make_tuple(p.unit, p.track, p.end),
                              [](const UnitWindow& w, const std::tuple<int, uint32_t, int64_t>& key) {
                                return std::tie(w.unit, w.track, w.ts) < key;
                              });
    if (q != post.end() && q->unit == p.unit && q->track == p.track) until = std::min(until, q->ts);
    if (p.step >= 0) until = std::min(until, rank.steps[size_t(p.step)].host_end_ns);
    auto it = std::lower_bound(compute.begin(), compute.end(), std::make_tuple(p.track, p.end, uint32_t(0)));
    int64_t lo = INT64_MAX, hi = INT64_MIN, first_launch = INT64_MAX;
    for (; it != compute.end() && std::get<0>(*it) == p.track && std::get<1>(*it) < until; ++it) {
      const model::Event& kernel = events[std::get<2>(*it)];
      lo = std::min(lo, kernel.ts_ns);
      hi = std::max(hi, kernel.end_ns());
      first_launch = std::min(first_launch, kernel.issued_ns);
    }
    if (lo == INT64_MAX) continue;
    model::Event bc = derived(bc_name, cat, p.unit, lo, model::sat_sub(hi, lo), p.step);  // kernel times: any int64
    bc.issued_ns = first_launch;
    out.push_back(bc);
  }
  for (const HostLabel* s : u.backward_starts) out.push_back(derived(phase_name, cat, -1, s->ts, 0, s->step));
  std::vector<Query> limiter;
  for (size_t i = 0; i < u.rate_limited.size(); ++i)
    limiter.push_back({u.rate_limited[i]->track, u.rate_limited[i]->ts, i});
  std::vector<int> limited_unit = innermost_units(u.gathers, std::move(limiter), u.rate_limited.size());
  for (size_t i = 0; i < u.rate_limited.size(); ++i) {
    model::Event e = derived(limited, cat, limited_unit[i], u.rate_limited[i]->ts, 0, u.rate_limited[i]->step);
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
  // Typed on the rank's shape, numbered in forward order; the metadata key is what `inspect` shows.
  for (size_t i = 0; i < u.names.size(); ++i) rank.shape.units.push_back({int64_t(i), u.names[i], {}, {}});
  rank.metadata[kineto_keys::kFsdpUnits] = u.names;
  rank.unit_identity = u.identity;
  return u.names.size();
}

}  // namespace shardscope::plugins
