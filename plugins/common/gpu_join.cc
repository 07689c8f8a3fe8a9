#include "plugins/common/gpu_join.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <unordered_set>
#include <string_view>
#include <unordered_map>

#include "model/saturating.h"
#include "tracer/format/keys.h"

namespace shardscope::plugins::gpu_join {
namespace {

using model::CollectiveKind;
using model::Event;
using model::IntervalClass;

// "CUDA API thread 1623" -> 1623: the OS thread whose calls CUPTI put on that track (keys::kCudaApiTrack).
std::optional<int64_t> api_thread(std::string_view name) {
  std::string_view pattern = keys::kCudaApiTrack;
  std::string_view prefix = pattern.substr(0, pattern.find("{}"));
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) return std::nullopt;
  name.remove_prefix(prefix.size());
  int64_t tid = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), tid);
  if (ec != std::errc() || end != name.data() + name.size()) return std::nullopt;
  return tid;
}

// A kernel of a known kind joins only a host collective of that kind (NCCL's Generic kernel says none).
bool same_kind(CollectiveKind kernel, CollectiveKind host) {
  return kernel == host || kernel == CollectiveKind::None || kernel == CollectiveKind::Unknown;
}

class Joiner {
 public:
  Joiner(model::Rank& r, Input& in) : r_(r), in_(in) {
    for (size_t i = 0; i < r.tracks.size(); ++i)
      if (auto t = api_thread(r.tracks[i].name)) api_track_[*t] = uint32_t(i);
    for (auto [thread, track] : in.api_tracks) api_track_[thread] = track;
    std::unordered_map<int64_t, int64_t> os_tid(in.os_tids.begin(), in.os_tids.end());
    std::unordered_set<int64_t> traced;
    for (size_t i = 0; i < r.tracks.size(); ++i)
      if (auto t = os_tid.find(r.tracks[i].tid); t != os_tid.end()) {
        traced.insert(t->second);
        if (auto a = api_track_.find(t->second); a != api_track_.end()) host_api_[uint32_t(i)] = a->second;
      }
    for (auto [thread, track] : api_track_)
      if (!traced.count(thread)) helpers_.push_back(track);
    std::sort(in.api.begin(), in.api.end(),
              [](const ApiCall& a, const ApiCall& b) { return a.track != b.track ? a.track < b.track : a.ts < b.ts; });
    std::sort(in.device.begin(), in.device.end(),
              [](const DeviceWork& a, const DeviceWork& b) { return a.correlation < b.correlation; });
  }

  Event& at(Ref x) { return r_.tracks[x.track].events[x.index]; }

  // Each device event (index into in.device) launched by a call on API track `api` in [lo, hi).
  template <typename F>
  void launched(uint32_t api, int64_t lo, int64_t hi, F&& f) {
    auto it = std::lower_bound(in_.api.begin(), in_.api.end(), std::make_pair(api, lo),
                               [](const ApiCall& c, const std::pair<uint32_t, int64_t>& k) {
                                 return c.track != k.first ? c.track < k.first : c.ts < k.second;
                               });
    for (; it != in_.api.end() && it->track == api && it->ts < hi; ++it) {
      auto d = std::lower_bound(in_.device.begin(), in_.device.end(), it->correlation,
                                [](const DeviceWork& w, int64_t c) { return w.correlation < c; });
      for (; d != in_.device.end() && d->correlation == it->correlation; ++d) f(size_t(d - in_.device.begin()));
    }
  }
  // ... by a call on the host range's own thread, inside it.
  template <typename F>
  void launched_inside(Ref host, F&& f) {
    auto api = host_api_.find(host.track);
    if (api == host_api_.end()) return;
    const Event& h = at(host);
    launched(api->second, h.ts_ns, h.end_ns(), f);
  }

  void collectives(Stats& s) {
    std::vector<int32_t> owner(in_.device.size(), -1);  // index into in.comm
    std::vector<bool> by_id(in_.comm.size(), false);
    // By identity first: the kernel's external_id is its host collective's issued_ns.
    std::vector<uint32_t> by_issued(in_.comm.size());
    for (uint32_t i = 0; i < by_issued.size(); ++i) by_issued[i] = i;
    auto issued = [&](uint32_t c) { return at(in_.comm[c]).issued_ns; };
    std::sort(by_issued.begin(), by_issued.end(), [&](uint32_t a, uint32_t b) { return issued(a) < issued(b); });
    for (size_t d = 0; d < in_.device.size(); ++d) {
      const DeviceWork& w = in_.device[d];
      const Event& k = at(w.at);
      if (w.external_id == model::kUnknown || k.cls != IntervalClass::Communication) continue;
      auto lo = std::lower_bound(by_issued.begin(), by_issued.end(), w.external_id,
                                 [&](uint32_t c, int64_t v) { return issued(c) < v; });
      int32_t found = -1, matches = 0;
      for (auto it = lo; it != by_issued.end() && issued(*it) == w.external_id; ++it)
        if (same_kind(k.coll, at(in_.comm[*it]).coll)) found = int32_t(*it), ++matches;
      if (matches != 1) continue;  // two collectives issued at once and a kernel of no kind: not by id
      owner[d] = found;
      by_id[size_t(found)] = true;
      ++s.by_external_id;
    }
    // Else by thread: the launch calls on the host collective's own thread, inside it.
    for (size_t c = 0; c < in_.comm.size(); ++c) {
      if (by_id[c]) continue;
      CollectiveKind kind = at(in_.comm[c]).coll;
      launched_inside(in_.comm[c], [&](size_t d) {
        const Event& k = at(in_.device[d].at);
        if (owner[d] >= 0 || k.cls != IntervalClass::Communication || !same_kind(k.coll, kind)) return;
        owner[d] = int32_t(c);
        ++s.by_thread;
      });
    }
    apply(owner);
  }

  // The kernel takes the host's unit, group size, issue time and bytes; a collective NCCL ran as several
  // kernels splits its bytes by NCCL's message sizes (evenly when they are absent), so sums stay right.
  void apply(const std::vector<int32_t>& owner) {
    std::vector<uint32_t> kernels(in_.comm.size(), 0);
    // Summed in 128 bits: message sizes come from the file, and a wrapped sum (0, say) would be divided by.
    std::vector<__int128> message_sum(in_.comm.size(), 0);
    std::vector<bool> all_sized(in_.comm.size(), true);
    for (size_t d = 0; d < owner.size(); ++d) {
      if (owner[d] < 0) continue;
      size_t c = size_t(owner[d]);
      ++kernels[c];
      int64_t m = in_.device[d].message_bytes;
      if (m == model::kUnknown || m <= 0) all_sized[c] = false;
      else
        message_sum[c] += m;
    }
    std::vector<int64_t> given(in_.comm.size(), 0);
    std::vector<uint32_t> seen(in_.comm.size(), 0);
    for (size_t d = 0; d < owner.size(); ++d) {
      if (owner[d] < 0) continue;
      size_t c = size_t(owner[d]);
      const Event& h = at(in_.comm[c]);
      Event& k = at(in_.device[d].at);
      k.unit = h.unit;
      if (h.group_size > 0) k.group_size = h.group_size;
      if (h.issued_ns != model::kUnknown) k.issued_ns = h.issued_ns;
      if (k.coll == CollectiveKind::None || k.coll == CollectiveKind::Unknown) k.coll = h.coll;
      if (h.bytes == model::kUnknown || h.bytes < 0) continue;
      int64_t share = h.bytes;
      if (kernels[c] > 1) {
        if (++seen[c] == kernels[c]) share = h.bytes - given[c];  // the last takes what rounding left
        else if (all_sized[c])
          share = int64_t(__int128(h.bytes) * in_.device[d].message_bytes / message_sum[c]);
        else
          share = h.bytes / int64_t(kernels[c]);
        given[c] += share;
      }
      k.bytes = share;
    }
  }

  static bool is_kernel(const Event& k) { return k.cls == IntervalClass::Compute || k.cls == IntervalClass::Other; }

  // Each unit's compute range on the compute thread -> the device span of the kernels launched for it.
  // libtorch runs a CUDA backward on its autograd engine's device thread while the calling thread waits
  // in backward(), so the launches come from the compute thread itself and, inside its range, from the
  // helper threads the trainer does not trace (its own threads all have tracks: compute, comm), onto the
  // streams the compute thread launches its own kernels to.
  void unit_ranges(Stats& s) {
    std::unordered_set<uint32_t> streams;  // device tracks
    std::unordered_set<uint32_t> compute_threads;
    for (Ref u : in_.compute)
      if (auto a = host_api_.find(u.track); a != host_api_.end() && compute_threads.insert(a->second).second)
        launched(a->second, INT64_MIN, INT64_MAX, [&](size_t d) {
          if (is_kernel(at(in_.device[d].at))) streams.insert(in_.device[d].at.track);
        });
    std::vector<Event> out;
    model::StringId cat = r_.strings.intern(keys::kCatFsdp);
    for (Ref u : in_.compute) {
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      auto span = [&](size_t d) {
        const Event& k = at(in_.device[d].at);
        if (!is_kernel(k) || !streams.count(in_.device[d].at.track)) return;
        lo = std::min(lo, k.ts_ns);
        hi = std::max(hi, k.end_ns());
      };
      launched_inside(u, span);
      if (host_api_.count(u.track))
        for (uint32_t helper : helpers_) launched(helper, at(u).ts_ns, at(u).end_ns(), span);
      if (lo == INT64_MAX) continue;
      const Event& h = at(u);
      Event e;
      e.name = h.name;
      e.cat = cat;
      e.unit = h.unit;
      e.ts_ns = lo;
      e.dur_ns = model::sat_sub(hi, lo);  // kernel times from the file: any int64
      out.push_back(e);
    }
    s.unit_ranges = out.size();
    if (out.empty()) return;
    // pid -1: derived, no process of the trace (as the Kineto importer's FSDP unit track).
    r_.tracks.push_back(model::Track{-1, -1, "FSDP units (device time)", model::TrackKind::HostThread, std::move(out)});
  }

 private:
  model::Rank& r_;
  Input& in_;
  std::unordered_map<int64_t, uint32_t> api_track_;  // OS thread -> its CUDA API track (index)
  std::unordered_map<uint32_t, uint32_t> host_api_;  // host track (index) -> its thread's CUDA API track
  std::vector<uint32_t> helpers_;                    // API tracks of threads with no host track
};

}  // namespace

Stats join(model::Rank& r, Input& in) {
  Stats s;
  Joiner j(r, in);
  j.collectives(s);
  j.unit_ranges(s);  // last: it adds a track
  in = Input{};
  return s;
}

}  // namespace shardscope::plugins::gpu_join
