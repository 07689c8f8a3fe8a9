#include "analyzer/metrics/collectives.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analyzer/metrics/clock_map.h"
#include "model/classify.h"
#include "model/saturating.h"

namespace shardscope::metrics {

using model::CollectiveKind;
// Saturating: times and sizes from a hostile or broken file may lie far apart or near the int64 bounds; a
// total must never wrap below its parts.
using model::sat_add;
using model::sat_sub;

std::optional<double> CollectiveStats::algbw_gbps() const {
  if (sized_count == 0 || sized_time_ns <= 0) return std::nullopt;
  return double(bytes) / double(sized_time_ns);  // bytes per ns = GB/s
}
std::optional<double> CollectiveStats::busbw_gbps() const {
  if (sized_count == 0 || sized_time_ns <= 0 || sized_without_group > 0) return std::nullopt;
  return bus_bytes / double(sized_time_ns);
}

CollectiveNa CollectiveStats::bytes_na() const { return sized_count ? CollectiveNa::None : CollectiveNa::NoMessageSize; }
CollectiveNa CollectiveStats::bandwidth_na() const {
  if (!sized_count) return bytes_na();
  if (sized_time_ns <= 0) return CollectiveNa::SizedTakeNoTime;
  return CollectiveNa::None;
}
CollectiveNa CollectiveStats::busbw_na() const {
  if (CollectiveNa why = bandwidth_na(); why != CollectiveNa::None) return why;
  if (sized_without_group > 0) return CollectiveNa::NoGroupSizeForBusbw;
  return CollectiveNa::None;
}
CollectiveNa CollectiveStats::group_na() const { return group_size ? CollectiveNa::None : CollectiveNa::NoGroupSize; }

std::vector<CollectiveStats> collective_stats(const model::Rank& rank, int64_t lo, int64_t hi) {
  std::map<CollectiveKind, CollectiveStats> by;
  for (const model::Track& t : rank.tracks)
    for (const model::Event& e : t.events) {
      if (e.cls != model::IntervalClass::Communication || e.ph != 'X' || e.ts_ns < lo || e.ts_ns >= hi) continue;
      CollectiveKind k = e.coll == CollectiveKind::None ? CollectiveKind::Unknown : e.coll;
      CollectiveStats& s = by[k];
      s.kind = k;
      ++s.count;
      s.time_ns = sat_add(s.time_ns, e.dur_ns);
      s.group_size = std::max(s.group_size, int(e.group_size));
      if (e.bytes != model::kUnknown && e.bytes >= 0) {
        ++s.sized_count;
        s.bytes = sat_add(s.bytes, e.bytes);
        s.sized_time_ns = sat_add(s.sized_time_ns, e.dur_ns);
        s.bus_bytes += double(e.bytes) * model::busbw_factor(k, e.group_size);
        // busbw_factor takes an unknown group as 1: right for kinds whose factor is 1, not for these.
        if (e.group_size <= 0 && (k == CollectiveKind::AllGather || k == CollectiveKind::ReduceScatter || k == CollectiveKind::AllReduce))
          ++s.sized_without_group;
      }
    }
  std::vector<CollectiveStats> out;
  for (auto& [k, s] : by) out.push_back(s);
  return out;
}

Stragglers find_stragglers(const model::Trace& trace) {
  Stragglers out;
  if (trace.ranks.size() < 2) {
    out.not_applicable = StragglersNa::OneRank;
    return out;
  }
  // Per rank, per kind: the start of each collective instance, in issue order, on the wall clock: each
  // rank's own (monotonic, realtime) pairs map it there, since ranks on different machines have unrelated
  // monotonic clocks. Instances are still matched by order, never by time.
  std::vector<std::map<CollectiveKind, std::vector<int64_t>>> starts(trace.ranks.size());
  std::vector<int> unmapped;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    ClockMap clock(trace.ranks[r].clock_sync);
    if (!clock.mapped()) unmapped.push_back(trace.ranks[r].rank);
    for (const model::Track& t : trace.ranks[r].tracks)
      for (const model::Event& e : t.events)
        if (e.cls == model::IntervalClass::Communication && e.ph == 'X') starts[r][e.coll].push_back(e.ts_ns);
    for (auto& [k, v] : starts[r]) {
      std::sort(v.begin(), v.end());
      for (int64_t& ts : v) ts = clock.to_realtime(ts);
    }
  }
  if (unmapped.size() == trace.ranks.size()) out.notes.push_back({StragglerNote::Code::NoClockSync});
  else if (!unmapped.empty()) out.notes.push_back({StragglerNote::Code::SomeUnmapped, unmapped});
  std::map<CollectiveKind, size_t> common;
  for (auto& [k, v] : starts[0]) common[k] = v.size();
  for (size_t r = 1; r < starts.size(); ++r)
    for (auto& [k, n] : common) {
      size_t here = starts[r].count(k) ? starts[r][k].size() : 0;
      if (here != n)
        out.notes.push_back({StragglerNote::Code::CountsDiffer, {}, trace.ranks[r].rank, trace.ranks[0].rank, here, n, k});
      n = std::min(n, here);
    }
  out.ranks.resize(trace.ranks.size());
  for (size_t r = 0; r < trace.ranks.size(); ++r) out.ranks[r].rank = trace.ranks[r].rank;
  for (auto& [k, n] : common)
    for (size_t i = 0; i < n; ++i) {
      std::vector<std::pair<int64_t, size_t>> arr;
      for (size_t r = 0; r < starts.size(); ++r) arr.push_back({starts[r][k][i], r});
      std::sort(arr.begin(), arr.end());
      StragglerInstance s{k, i, trace.ranks[arr.back().second].rank, sat_sub(arr.back().first, arr[arr.size() - 2].first),
                          sat_sub(arr.back().first, arr.front().first)};
      StragglerRank& sr = out.ranks[arr.back().second];
      ++sr.times_last;
      sr.total_late_by_ns = sat_add(sr.total_late_by_ns, s.late_by_ns);
      sr.max_late_by_ns = std::max(sr.max_late_by_ns, s.late_by_ns);
      out.instances.push_back(s);
    }
  if (out.instances.empty() && out.not_applicable == StragglersNa::None) out.not_applicable = StragglersNa::NoCommonCollective;
  return out;
}

}  // namespace shardscope::metrics
