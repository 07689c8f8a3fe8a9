#include "analyzer/metrics/collectives.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analyzer/metrics/instances.h"
#include "model/classify.h"
#include "model/saturating.h"

namespace shardscope::metrics {

using model::CollectiveKind;
// Saturating: times and sizes from a hostile or broken file may lie far apart or near the int64 bounds; a
// total must never wrap below its parts.
using model::sat_add;
using model::sat_sub;

std::optional<double> CollectiveStats::wait_pct() const {
  if (!link_ns || time_ns <= 0) return std::nullopt;
  return std::clamp(100.0 * double(sat_sub(time_ns, *link_ns)) / double(time_ns), 0.0, 100.0);
}

std::optional<double> CollectiveStats::algbw_gbps() const {
  if (sized_count == 0 || sized_time_ns <= 0) return std::nullopt;
  return double(bytes) / double(sized_time_ns);  // bytes per ns = GB/s
}
std::optional<double> CollectiveStats::busbw_gbps() const {
  if (sized_count == 0 || sized_time_ns <= 0 || sized_without_group > 0) return std::nullopt;
  return bus_bytes / double(sized_time_ns);
}

CollectiveNa CollectiveStats::bytes_na() const {
  return sized_count ? CollectiveNa::None : CollectiveNa::NoMessageSize;
}
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
        // busbw_factor takes an unknown group as 1: right for kinds whose factor is 1, not for the others.
        if (e.group_size <= 0 && model::busbw_needs_group(k)) ++s.sized_without_group;
      }
    }
  std::vector<CollectiveStats> out;
  for (auto& [k, s] : by) out.push_back(s);
  return out;
}

Stragglers find_stragglers(const model::Trace& trace) {
  InstanceTable table;
  for (size_t r = 0; r < trace.ranks.size(); ++r) table.add(arrivals(trace.ranks[r], {trace.ranks[r].rank, r}));
  return table.stragglers();
}

}  // namespace shardscope::metrics
