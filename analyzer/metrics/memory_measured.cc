#include "analyzer/metrics/memory_measured.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <unordered_map>

#include "model/saturating.h"

namespace shardscope::metrics {
namespace {

using model::AllocatorEvent;

// What a host range's name says about the allocations made inside it.
enum NameFlag : uint8_t {
  kAllGather = 1,
  kReduceScatter = 2,
  kOptimizerStep = 4,
  kBackward = 8,             // an autograd engine range: backward has begun
  kFirstOptimizerStep = 16,  // set per allocation, not per name: inside the trace's first Optimizer.step
};

uint8_t name_flags(std::string_view name) {
  std::string low(name);
  std::transform(low.begin(), low.end(), low.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  auto has = [&](std::string_view w) { return low.find(w) != std::string::npos; };
  uint8_t f = 0;
  // FSDP1 unshards in its pre-forward and pre-backward hooks (the padded unsharded parameter is allocated
  // there, before the collective op); FSDP2 in FSDP::all_gather and its copy-in and copy-out.
  if (name.starts_with("FSDP::all_gather") || has("all_gather") || has("allgather") ||
      name.starts_with("FullyShardedDataParallel._pre_forward") ||
      name.starts_with("FullyShardedDataParallel._pre_backward"))
    f |= kAllGather;
  if (name.starts_with("FSDP::post_backward_reduce") || has("reduce_scatter") || has("reducescatter") ||
      name.starts_with("FullyShardedDataParallel._post_backward_hook"))
    f |= kReduceScatter;
  if (name.starts_with("Optimizer.step#")) f |= kOptimizerStep;
  if (name.starts_with("autograd::engine::evaluate_function")) f |= kBackward;
  return f;
}

// name_flags by the rank's interned names, each worked out once.
class NameFlags {
 public:
  explicit NameFlags(const model::Rank& rank) : rank_(rank), flags_(rank.strings.size(), kUnset) {}
  uint8_t operator()(model::StringId id) {
    if (id >= flags_.size()) return 0;
    if (flags_[id] == kUnset) flags_[id] = name_flags(rank_.str(id));
    return flags_[id];
  }

 private:
  static constexpr uint8_t kUnset = 0xFF;
  const model::Rank& rank_;
  std::vector<uint8_t> flags_;
};

// The device with the most events (the lowest on a tie): one rank drives one GPU; others are counted.
std::vector<const AllocatorEvent*> one_device(const model::Rank& rank, MeasuredMemory& m) {
  std::map<int32_t, int64_t> per_device;
  for (const AllocatorEvent& a : rank.allocator) ++per_device[a.device];
  std::vector<const AllocatorEvent*> out;
  if (per_device.empty()) return out;
  auto most = std::max_element(per_device.begin(), per_device.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  m.device = most->first;
  m.other_device_events = int64_t(rank.allocator.size()) - most->second;
  out.reserve(size_t(most->second));
  for (const AllocatorEvent& a : rank.allocator)
    if (a.device == m.device) out.push_back(&a);
  return out;
}

// Per step (its host range [host_start, host_end)), the largest totals of the events inside it.
void step_peaks(const model::Rank& rank, const std::vector<const AllocatorEvent*>& ev, MeasuredMemory& m) {
  for (const model::Step& s : rank.steps) {
    auto lo = std::lower_bound(ev.begin(), ev.end(), s.host_start_ns,
                               [](const AllocatorEvent* a, int64_t t) { return a->ts_ns < t; });
    MeasuredStep st{s.number, INT64_MIN, -1};
    for (auto it = lo; it != ev.end() && (*it)->ts_ns < s.host_end_ns; ++it) {
      st.peak_allocated = std::max(st.peak_allocated, (*it)->total_allocated);
      st.peak_reserved = std::max(st.peak_reserved, (*it)->total_reserved);
    }
    if (st.peak_allocated == INT64_MIN) continue;
    m.steps.push_back(st);
    if (s.host_start_ns <= m.peak_ts_ns && m.peak_ts_ns < s.host_end_ns && !m.peak_in_step)
      m.peak_in_step = true, m.peak_step = s.number;
  }
  for (const MeasuredStep& st : m.steps)
    if (st.peak_allocated == m.peak_allocated && !(m.peak_in_step && st.step == m.peak_step))
      m.peak_again.push_back(st.step);
}

// Each allocation's free (by address, in time order): free_of[i] is the index of the event that freed event
// i, or -1. Frees of blocks allocated before the trace, up to the peak, are summed into `older_freed`.
std::vector<int64_t> pair_frees(const std::vector<const AllocatorEvent*>& ev, size_t peak, int64_t& older_freed) {
  std::vector<int64_t> free_of(ev.size(), -1);
  std::unordered_map<uint64_t, size_t> live;
  older_freed = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    const AllocatorEvent& a = *ev[i];
    if (a.bytes > 0) {
      live[a.addr] = i;
    } else if (a.bytes < 0) {
      if (auto it = live.find(a.addr); it != live.end()) {
        free_of[it->second] = int64_t(i);
        live.erase(it);
      } else if (i <= peak) {
        older_freed = model::sat_add(older_freed, model::sat_neg(a.bytes));
      }
    }
  }
  return free_of;
}

struct Query {
  int64_t ts;
  size_t event;  // index into the device's events
  uint8_t flags = 0;
};

// For each query on the track (by time), the flags of the host ranges open then (start <= ts <= end).
void open_flags(const model::Track& t, std::vector<Query>& qs, NameFlags& names, int64_t first_opt_ts) {
  std::sort(qs.begin(), qs.end(), [](const Query& a, const Query& b) { return a.ts < b.ts; });
  std::vector<const model::Event*> open;
  size_t e = 0;
  for (Query& q : qs) {
    for (; e < t.events.size() && t.events[e].ts_ns <= q.ts; ++e)
      if (t.events[e].ph == 'X' && names(t.events[e].name)) open.push_back(&t.events[e]);
    std::erase_if(open, [&](const model::Event* o) { return o->end_ns() < q.ts; });
    for (const model::Event* o : open) {
      const uint8_t f = names(o->name);
      q.flags |= f;
      if ((f & kOptimizerStep) && o->ts_ns == first_opt_ts) q.flags |= kFirstOptimizerStep;
    }
  }
}

// The starts of the host ranges with `flag`, on every host thread, sorted.
std::vector<int64_t> starts_of(const model::Rank& rank, NameFlags& names, uint8_t flag) {
  std::vector<int64_t> out;
  for (const model::Track& t : rank.tracks)
    if (t.kind == model::TrackKind::HostThread)
      for (const model::Event& e : t.events)
        if (e.ph == 'X' && (names(e.name) & flag)) out.push_back(e.ts_ns);
  std::sort(out.begin(), out.end());
  return out;
}

// The first time in [lo, hi) of a sorted list, or hi.
int64_t first_in(const std::vector<int64_t>& v, int64_t lo, int64_t hi) {
  auto it = std::lower_bound(v.begin(), v.end(), lo);
  return it != v.end() && *it < hi ? *it : hi;
}

// Activations: allocated in its step's forward (before the step's first autograd range), freed in that
// step's backward (from then until the step's first Optimizer.step, or its end).
bool activation(const model::Rank& rank, const std::vector<int64_t>& backward, const std::vector<int64_t>& opt,
                int64_t alloc_ts, int64_t free_ts) {
  for (const model::Step& s : rank.steps) {
    if (alloc_ts < s.host_start_ns || alloc_ts >= s.host_end_ns) continue;
    const int64_t bw = first_in(backward, s.host_start_ns, s.host_end_ns);
    if (bw == s.host_end_ns) return false;  // no backward in the step
    const int64_t bw_end = first_in(opt, s.host_start_ns, s.host_end_ns);
    return alloc_ts < bw && bw <= free_ts && free_ts < bw_end;
  }
  return false;
}

// Groups the allocations alive at the peak by what made them.
void group_alive(const model::Rank& rank, const std::vector<const AllocatorEvent*>& ev, size_t peak,
                 const std::vector<int64_t>& free_of, MeasuredMemory& m) {
  NameFlags names(rank);
  const std::vector<int64_t> backward = starts_of(rank, names, kBackward);
  const std::vector<int64_t> opt = starts_of(rank, names, kOptimizerStep);
  m.backward_seen = !backward.empty();
  const int64_t first_opt = opt.empty() ? INT64_MIN : opt.front();
  std::vector<std::vector<Query>> per_track(rank.tracks.size());
  std::vector<Query> no_track;
  for (size_t i = 0; i <= peak; ++i)
    if (ev[i]->bytes > 0 && (free_of[i] < 0 || size_t(free_of[i]) > peak))
      (ev[i]->track < rank.tracks.size() ? per_track[ev[i]->track] : no_track).push_back({ev[i]->ts_ns, i});
  for (size_t t = 0; t < per_track.size(); ++t) open_flags(rank.tracks[t], per_track[t], names, first_opt);
  per_track.push_back(std::move(no_track));
  for (const std::vector<Query>& qs : per_track)
    for (const Query& q : qs) {
      const AllocatorEvent& a = *ev[q.event];
      Made made = Made::Other;
      if (q.flags & kAllGather) made = Made::AllGather;
      else if (q.flags & kReduceScatter)
        made = Made::ReduceScatter;
      else if (q.flags & kFirstOptimizerStep)
        made = Made::Optimizer;
      else if (free_of[q.event] >= 0 && activation(rank, backward, opt, a.ts_ns, ev[size_t(free_of[q.event])]->ts_ns))
        made = Made::Activations;
      MeasuredGroup& g = m.alive[size_t(made)];
      g.bytes = model::sat_add(g.bytes, a.bytes);  // sizes come from the file
      ++g.allocations;
    }
}

}  // namespace

MeasuredMemory measure_memory(const model::Rank& rank) {
  MeasuredMemory m;
  for (int i = 0; i < kMadeCount; ++i) m.alive.push_back({Made(i), 0, 0});
  const std::vector<const AllocatorEvent*> ev = one_device(rank, m);
  if (ev.empty()) return m;
  m.events = int64_t(ev.size());
  m.before_trace = model::sat_sub(ev.front()->total_allocated, ev.front()->bytes);
  size_t peak = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev[i]->total_allocated > ev[peak]->total_allocated) peak = i;
    m.peak_reserved = std::max(m.peak_reserved, ev[i]->total_reserved);
    if (i > 0 && model::sat_add(ev[i - 1]->total_allocated, ev[i]->bytes) != ev[i]->total_allocated) ++m.chain_breaks;
  }
  m.peak_allocated = ev[peak]->total_allocated;
  m.peak_ts_ns = ev[peak]->ts_ns;
  step_peaks(rank, ev, m);
  int64_t older_freed = 0;
  const std::vector<int64_t> free_of = pair_frees(ev, peak, older_freed);
  m.before_trace_left = model::sat_sub(m.before_trace, older_freed);
  group_alive(rank, ev, peak, free_of, m);
  return m;
}

std::string_view zero_counterpart(Made m) {
  switch (m) {
    case Made::AllGather: return "unsharded_params";
    case Made::ReduceScatter: return "gradients";
    case Made::Optimizer: return "optimizer_state";
    case Made::Activations: return "activations";
    case Made::Other: return "";
  }
  return "";
}

}  // namespace shardscope::metrics
