#include "analyzer/metrics/instances.h"

#include <algorithm>

#include "analyzer/metrics/clock_map.h"
#include "analyzer/metrics/prefetch_internal.h"
#include "model/classify.h"
#include "model/saturating.h"

namespace shardscope::metrics {

using model::CollectiveKind;

namespace {

bool is_collective(const model::Event& e) { return e.cls == model::IntervalClass::Communication && e.ph == 'X'; }

}  // namespace

RankArrivals arrivals(const model::Rank& rank, RankKey key) {
  RankArrivals out;
  out.key = key;
  ClockMap clock(rank.clock_sync);
  out.clock_mapped = clock.mapped();
  std::map<CollectiveKind, std::vector<const model::Event*>> by_kind;
  for (const model::Track& t : rank.tracks)
    for (const model::Event& e : t.events)
      if (is_collective(e)) by_kind[e.coll].push_back(&e);
  for (auto& [kind, events] : by_kind) {
    std::stable_sort(events.begin(), events.end(), [](const model::Event* a, const model::Event* b) { return a->ts_ns < b->ts_ns; });
    std::vector<int64_t>& starts = out.wall_start[kind];
    std::vector<InstanceSize>& sizes = out.size[kind];
    for (const model::Event* e : events) {
      starts.push_back(clock.to_realtime(e->ts_ns));
      sizes.push_back({e->dur_ns, e->bytes, e->group_size});
    }
  }
  return out;
}

void locate_all_gathers(const model::Rank& rank, RankPrefetch& prefetch) {
  ClockMap clock(rank.clock_sync);
  std::vector<std::pair<int64_t, std::pair<int32_t, int32_t>>> all;  // (start, (track, index))
  for (size_t t = 0; t < rank.tracks.size(); ++t)
    for (size_t i = 0; i < rank.tracks[t].events.size(); ++i) {
      const model::Event& e = rank.tracks[t].events[i];
      if (is_collective(e) && e.coll == CollectiveKind::AllGather) all.push_back({e.ts_ns, {int32_t(t), int32_t(i)}});
    }
  std::sort(all.begin(), all.end());
  for (StepPrefetch& s : prefetch.steps)
    for (UnitPrefetch& u : s.units) {
      if (!u.all_gather.valid()) continue;
      const std::pair<int32_t, int32_t> at{u.all_gather.track, u.all_gather.index};
      // By the pair's start, then among the few all-gathers that start with it.
      const int64_t ts = rank.tracks[size_t(at.first)].events[size_t(at.second)].ts_ns;
      auto it = std::lower_bound(all.begin(), all.end(), std::pair{ts, std::pair{INT32_MIN, INT32_MIN}});
      for (; it != all.end() && it->first == ts; ++it)
        if (it->second == at) {
          u.all_gather_ordinal = int64_t(it - all.begin());
          u.all_gather_wall_ns = clock.to_realtime(ts);
          break;
        }
    }
}

void Instance::add(int64_t ns, RankKey key, const InstanceSize& size) {
  Instance one;
  one.first_ns = one.last_ns = ns;
  one.last_lo = one.last_hi = key;
  one.ranks = 1;
  one.fastest_ns = size.dur_ns >= 0 ? size.dur_ns : INT64_MAX;
  one.bytes = size.bytes >= 0 ? size.bytes : model::kUnknown;
  one.group_size = size.group_size;
  merge(one);
}

void Instance::merge(const Instance& o) {
  if (o.ranks == 0) return;
  if (ranks == 0) {
    *this = o;
    return;
  }
  first_ns = std::min(first_ns, o.first_ns);
  if (o.last_ns > last_ns) {
    next_last_ns = std::max(o.next_last_ns, last_ns);
    last_ns = o.last_ns, last_lo = o.last_lo, last_hi = o.last_hi;
  } else if (o.last_ns < last_ns) {
    next_last_ns = std::max(next_last_ns, o.last_ns);
  } else {
    next_last_ns = last_ns;  // two ranks arrived last together
    last_lo = std::min(last_lo, o.last_lo), last_hi = std::max(last_hi, o.last_hi);
  }
  ranks += o.ranks;
  fastest_ns = std::min(fastest_ns, o.fastest_ns);
  bytes = std::max(bytes, o.bytes);
  group_size = std::max(group_size, o.group_size);
}

void InstanceTable::add(const RankArrivals& rank) {
  RankCounts& c = ranks_.emplace_back();
  c.key = rank.key;
  c.clock_mapped = rank.clock_mapped;
  for (const auto& [kind, starts] : rank.wall_start) {
    c.count[kind] = starts.size();
    std::vector<Instance>& row = instances_[kind];
    if (row.size() < starts.size()) row.resize(starts.size());
    auto sizes = rank.size.find(kind);
    for (size_t n = 0; n < starts.size(); ++n)
      if (sizes != rank.size.end() && n < sizes->second.size()) row[n].add(starts[n], rank.key, sizes->second[n]);
      else row[n].add(starts[n], rank.key);
  }
}

void InstanceTable::merge(const InstanceTable& other) {
  for (const auto& [kind, theirs] : other.instances_) {
    std::vector<Instance>& row = instances_[kind];
    if (row.size() < theirs.size()) row.resize(theirs.size());
    for (size_t n = 0; n < theirs.size(); ++n) row[n].merge(theirs[n]);
  }
  ranks_.insert(ranks_.end(), other.ranks_.begin(), other.ranks_.end());
}

InstanceTable InstanceTable::from_parts(std::map<CollectiveKind, std::vector<Instance>> instances, std::vector<RankCounts> ranks) {
  InstanceTable t;
  t.instances_ = std::move(instances);
  t.ranks_ = std::move(ranks);
  return t;
}

Stragglers InstanceTable::stragglers() const {
  Stragglers out;
  std::vector<RankCounts> ranks = ranks_;
  std::sort(ranks.begin(), ranks.end(), [](const RankCounts& a, const RankCounts& b) { return a.key < b.key; });
  if (ranks.size() < 2) {
    out.not_applicable = StragglersNa::OneRank;
    return out;
  }
  std::vector<int> unmapped;
  for (const RankCounts& r : ranks)
    if (!r.clock_mapped) unmapped.push_back(r.key.rank);
  if (unmapped.size() == ranks.size()) out.notes.push_back({StragglerNote::Code::NoClockSync});
  else if (!unmapped.empty()) out.notes.push_back({StragglerNote::Code::SomeUnmapped, unmapped});
  // The kinds of the first rank, each up to the fewest instances any rank has; a rank whose count differs
  // from the first rank's is named.
  std::map<CollectiveKind, uint64_t> common = ranks[0].count;
  for (size_t r = 1; r < ranks.size(); ++r)
    for (auto& [k, n] : common) {
      auto it = ranks[r].count.find(k);
      const uint64_t here = it == ranks[r].count.end() ? 0 : it->second, there = ranks[0].count.at(k);
      if (here != there) out.notes.push_back({StragglerNote::Code::CountsDiffer, {}, ranks[r].key.rank, ranks[0].key.rank, here, there, k});
      n = std::min(n, here);
    }
  std::map<RankKey, size_t> place;
  out.ranks.resize(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) out.ranks[r].rank = ranks[r].key.rank, place[ranks[r].key] = r;
  for (const auto& [k, n] : common) {
    auto row = instances_.find(k);
    for (size_t i = 0; i < n && row != instances_.end(); ++i) {
      const Instance& in = row->second[i];
      StragglerInstance s{k, i, in.last_hi.rank, model::sat_sub(in.last_ns, in.next_last_ns), model::sat_sub(in.last_ns, in.first_ns)};
      StragglerRank& sr = out.ranks[place.at(in.last_hi)];
      ++sr.times_last;
      sr.total_late_by_ns = model::sat_add(sr.total_late_by_ns, s.late_by_ns);
      sr.max_late_by_ns = std::max(sr.max_late_by_ns, s.late_by_ns);
      out.instances.push_back(s);
    }
  }
  if (out.instances.empty()) out.not_applicable = StragglersNa::NoCommonCollective;
  return out;
}

std::optional<double> LinkStats::algbw_gbps() const {
  if (sized == 0 || sized_fastest_ns <= 0) return std::nullopt;
  return double(bytes) / double(sized_fastest_ns);  // bytes per ns = GB/s
}
std::optional<double> LinkStats::busbw_gbps() const {
  if (sized == 0 || sized_fastest_ns <= 0 || sized_without_group > 0) return std::nullopt;
  return bus_bytes / double(sized_fastest_ns);
}

namespace {

// Per kind, how many instances every rank has (0 for a kind some rank lacks).
std::map<CollectiveKind, uint64_t> common_counts(const std::vector<InstanceTable::RankCounts>& ranks) {
  std::map<CollectiveKind, uint64_t> common;
  if (ranks.empty()) return common;
  common = ranks.front().count;
  for (const auto& r : ranks)
    for (auto& [k, n] : common) {
      auto it = r.count.find(k);
      n = std::min(n, it == r.count.end() ? uint64_t(0) : it->second);
    }
  return common;
}

}  // namespace

std::vector<LinkStats> InstanceTable::links() const {
  std::vector<LinkStats> out;
  if (ranks_.size() < 2) return out;
  for (const auto& [kind, n] : common_counts(ranks_)) {
    auto row = instances_.find(kind);
    if (n == 0 || row == instances_.end()) continue;
    LinkStats l;
    l.kind = kind;
    for (size_t i = 0; i < n && i < row->second.size(); ++i) {
      const Instance& in = row->second[i];
      if (in.fastest_ns == INT64_MAX) continue;  // no rank said how long it ran
      ++l.instances;
      l.fastest_ns = model::sat_add(l.fastest_ns, in.fastest_ns);
      l.group_size = std::max(l.group_size, int(in.group_size));
      if (in.bytes != model::kUnknown) {
        ++l.sized;
        l.bytes = model::sat_add(l.bytes, in.bytes);
        l.sized_fastest_ns = model::sat_add(l.sized_fastest_ns, in.fastest_ns);
        l.bus_bytes += double(in.bytes) * model::busbw_factor(kind, in.group_size);
        if (in.group_size <= 0 && (kind == CollectiveKind::AllGather || kind == CollectiveKind::ReduceScatter || kind == CollectiveKind::AllReduce ||
                                   kind == CollectiveKind::AllToAll))
          ++l.sized_without_group;
      }
    }
    if (l.instances) out.push_back(l);
  }
  return out;
}

std::optional<int64_t> InstanceTable::fastest_time(CollectiveKind kind, uint64_t count) const {
  if (ranks_.size() < 2 || count == 0) return std::nullopt;
  for (const RankCounts& r : ranks_) {
    auto it = r.count.find(kind);
    if (it == r.count.end() || it->second != count) return std::nullopt;
  }
  auto row = instances_.find(kind);
  if (row == instances_.end() || row->second.size() < count) return std::nullopt;
  int64_t sum = 0;
  for (size_t i = 0; i < count; ++i) {
    if (row->second[i].fastest_ns == INT64_MAX) return std::nullopt;
    sum = model::sat_add(sum, row->second[i].fastest_ns);
  }
  return sum;
}

void InstanceTable::name_late_peers(RankPrefetch& prefetch, RankKey key) const {
  if (ranks_.size() < 2) return;
  auto row = instances_.find(CollectiveKind::AllGather);
  if (row == instances_.end()) return;
  bool rank_changed = false;
  for (StepPrefetch& s : prefetch.steps) {
    bool changed = false;
    for (UnitPrefetch& u : s.units) {
      if (u.all_gather_ordinal < 0 || size_t(u.all_gather_ordinal) >= row->second.size()) continue;
      const Instance& in = row->second[size_t(u.all_gather_ordinal)];
      const int64_t mine = u.all_gather_wall_ns;
      // The peer that arrived last, when after this rank: the first in rank order of those that did.
      if (in.last_ns > mine && !(in.last_lo == key)) {
        const int64_t late = model::sat_sub(in.last_ns, mine);  // wall times from the file: any int64
        if (late > u.late_peer_ns) u.late_peer = in.last_lo.rank, u.late_peer_ns = late;
      }
      // Issued in time and not held by the limiter or a reduce-scatter: a peer's lateness may explain it.
      const bool ran_in_time = u.cause == Cause::LongerThanCompute || u.cause == Cause::NoComputeUnderIt || u.cause == Cause::StartedLate;
      if (ran_in_time && u.late_peer >= 0 && u.late_peer_ns >= kLatePeerShare * double(u.exposed_wait_ns) && u.exposed_wait_ns > 0) {
        u.cause = Cause::LatePeer;
        changed = true;
      }
    }
    if (changed) judge_step(s), rank_changed = true;
  }
  if (rank_changed) judge_run(prefetch);
}

}  // namespace shardscope::metrics
