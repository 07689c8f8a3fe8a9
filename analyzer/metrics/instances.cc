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

std::vector<CollectiveRef> instance_ids(const model::Rank& rank) {
  std::vector<std::pair<int64_t, CollectiveRef>> all;  // (start, ref)
  for (size_t t = 0; t < rank.tracks.size(); ++t)
    for (size_t i = 0; i < rank.tracks[t].events.size(); ++i) {
      const model::Event& e = rank.tracks[t].events[i];
      if (!is_collective(e)) continue;
      CollectiveRef r{uint32_t(t), uint32_t(i), {}};
      r.id.kind = e.coll;
      r.id.group = std::string(rank.str(e.group));
      r.id.by_seq = e.seq != model::kNoSeq;
      r.id.n = r.id.by_seq ? int64_t(e.seq) : 0;
      all.push_back({e.ts_ns, std::move(r)});
    }
  // Places by start within each (kind, group), ties by track and index so that any order of reading agrees.
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first
                              : std::pair(a.second.track, a.second.index) < std::pair(b.second.track, b.second.index);
  });
  std::map<std::pair<CollectiveKind, std::string>, int64_t> place;
  std::vector<CollectiveRef> out;
  out.reserve(all.size());
  for (auto& [ts, r] : all) {
    int64_t& p = place[{r.id.kind, r.id.group}];
    if (!r.id.by_seq) r.id.n = p;
    ++p;
    out.push_back(std::move(r));
  }
  return out;
}

RankArrivals arrivals(const model::Rank& rank, RankKey key) { return arrivals(rank, key, instance_ids(rank)); }

RankArrivals arrivals(const model::Rank& rank, RankKey key, const std::vector<CollectiveRef>& ids) {
  RankArrivals out;
  out.key = key;
  ClockMap clock(rank.clock_sync);
  out.clock_mapped = clock.mapped();
  for (const CollectiveRef& r : ids) {
    const model::Event& e = rank.tracks[r.track].events[r.index];
    const InstanceSize size{e.dur_ns, e.bytes, e.group_size};
    const int64_t wall = clock.to_realtime(e.ts_ns);
    if (r.id.by_seq || !r.id.group.empty()) {
      out.keyed.push_back({r.id, wall, size});
    } else {
      out.wall_start[r.id.kind].push_back(wall);
      out.size[r.id.kind].push_back(size);
    }
  }
  return out;
}

void locate_all_gathers(const model::Rank& rank, RankPrefetch& prefetch) {
  locate_all_gathers(rank, prefetch, instance_ids(rank));
}

void locate_all_gathers(const model::Rank& rank, RankPrefetch& prefetch, const std::vector<CollectiveRef>& ids) {
  ClockMap clock(rank.clock_sync);
  std::map<std::pair<uint32_t, uint32_t>, const InstanceId*> id_of;
  for (const CollectiveRef& r : ids)
    if (r.id.kind == CollectiveKind::AllGather) id_of[{r.track, r.index}] = &r.id;
  for (StepPrefetch& s : prefetch.steps)
    for (UnitPrefetch& u : s.units) {
      if (!u.all_gather.valid()) continue;
      auto it = id_of.find({uint32_t(u.all_gather.track), uint32_t(u.all_gather.index)});
      if (it == id_of.end()) continue;
      u.all_gather_ordinal = it->second->n;
      u.all_gather_group = it->second->group;
      u.all_gather_by_seq = it->second->by_seq;
      u.all_gather_wall_ns =
          clock.to_realtime(rank.tracks[size_t(u.all_gather.track)].events[size_t(u.all_gather.index)].ts_ns);
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
    c.count[kind] += starts.size();
    auto sizes = rank.size.find(kind);
    for (size_t n = 0; n < starts.size(); ++n) {
      Instance& in = instances_[InstanceId{kind, "", false, int64_t(n)}];
      if (sizes != rank.size.end() && n < sizes->second.size()) in.add(starts[n], rank.key, sizes->second[n]);
      else
        in.add(starts[n], rank.key);
    }
  }
  for (const KeyedArrival& a : rank.keyed) {
    ++c.count[a.id.kind];
    instances_[a.id].add(a.wall_ns, rank.key, a.size);
  }
}

void InstanceTable::merge(const InstanceTable& other) {
  for (const auto& [id, theirs] : other.instances_) instances_[id].merge(theirs);
  ranks_.insert(ranks_.end(), other.ranks_.begin(), other.ranks_.end());
}

InstanceTable InstanceTable::from_parts(Row instances, std::vector<RankCounts> ranks) {
  InstanceTable t;
  t.instances_ = std::move(instances);
  t.ranks_ = std::move(ranks);
  return t;
}

bool InstanceTable::complete(const InstanceId& id, const Instance& in) const {
  // A named group smaller than the run (hybrid sharding's shard groups) is complete with its own ranks; a
  // group larger than the ranks analysed, with all of those. Unnamed, every rank is in it.
  const size_t expected =
      !id.group.empty() && in.group_size > 0 ? std::min(size_t(in.group_size), ranks_.size()) : ranks_.size();
  return in.ranks >= expected;
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
  else if (!unmapped.empty()) {
    // A raw monotonic clock against a wall clock: any "lateness" between them is the clocks' offset.
    out.notes.push_back({StragglerNote::Code::SomeUnmapped, unmapped});
    out.not_applicable = StragglersNa::ClocksNotAnchored;
    return out;
  }
  // A rank whose count of a kind differs from the first rank's is named: some of its instances have no
  // match. The instances matched are those every rank of their group has (complete()).
  const std::map<CollectiveKind, uint64_t>& common = ranks[0].count;
  for (size_t r = 1; r < ranks.size(); ++r)
    for (const auto& [k, n] : common) {
      auto it = ranks[r].count.find(k);
      const uint64_t here = it == ranks[r].count.end() ? 0 : it->second, there = ranks[0].count.at(k);
      if (here != there)
        out.notes.push_back(
            {StragglerNote::Code::CountsDiffer, {}, ranks[r].key.rank, ranks[0].key.rank, here, there, k});
    }
  std::map<RankKey, size_t> place;
  out.ranks.resize(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) out.ranks[r].rank = ranks[r].key.rank, place[ranks[r].key] = r;
  bool by_seq = false, by_place = false;
  for (const auto& [id, in] : instances_) {
    if (!complete(id, in)) continue;
    (id.by_seq ? by_seq : by_place) = true;
    StragglerInstance s{id.kind,
                        size_t(id.n),
                        in.last_hi.rank,
                        model::sat_sub(in.last_ns, in.next_last_ns),
                        model::sat_sub(in.last_ns, in.first_ns),
                        id.by_seq,
                        id.group};
    StragglerRank& sr = out.ranks[place.at(in.last_hi)];
    ++sr.times_last;
    sr.total_late_by_ns = model::sat_add(sr.total_late_by_ns, s.late_by_ns);
    sr.max_late_by_ns = std::max(sr.max_late_by_ns, s.late_by_ns);
    out.instances.push_back(s);
  }
  out.pairing = by_seq && by_place ? Pairing::Mixed
                : by_seq           ? Pairing::Sequence
                : by_place         ? Pairing::Position
                                   : Pairing::None;
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

std::vector<LinkStats> InstanceTable::links() const {
  std::vector<LinkStats> out;
  if (ranks_.size() < 2) return out;
  std::map<CollectiveKind, LinkStats> by;
  for (const auto& [id, in] : instances_) {
    if (!complete(id, in) || in.fastest_ns == INT64_MAX)
      continue;  // not every rank has it, or none said how long it ran
    LinkStats& l = by[id.kind];
    l.kind = id.kind;
    ++l.instances;
    l.fastest_ns = model::sat_add(l.fastest_ns, in.fastest_ns);
    l.group_size = std::max(l.group_size, int(in.group_size));
    if (in.bytes != model::kUnknown) {
      ++l.sized;
      l.bytes = model::sat_add(l.bytes, in.bytes);
      l.sized_fastest_ns = model::sat_add(l.sized_fastest_ns, in.fastest_ns);
      l.bus_bytes += double(in.bytes) * model::busbw_factor(id.kind, in.group_size);
      if (in.group_size <= 0 && model::busbw_needs_group(id.kind)) ++l.sized_without_group;
    }
  }
  for (auto& [k, l] : by) out.push_back(l);
  return out;
}

std::optional<int64_t> InstanceTable::fastest_time(CollectiveKind kind, uint64_t count) const {
  if (ranks_.size() < 2 || count == 0) return std::nullopt;
  for (const RankCounts& r : ranks_) {
    auto it = r.count.find(kind);
    if (it == r.count.end() || it->second != count) return std::nullopt;
  }
  // Every rank has `count` of the kind: the sum holds only when each instance is every rank's.
  int64_t sum = 0;
  uint64_t seen = 0;
  for (auto it = instances_.lower_bound(InstanceId{kind, "", false, INT64_MIN});
       it != instances_.end() && it->first.kind == kind; ++it) {
    if (!complete(it->first, it->second) || it->second.fastest_ns == INT64_MAX) return std::nullopt;
    sum = model::sat_add(sum, it->second.fastest_ns);
    ++seen;
  }
  if (seen != count) return std::nullopt;
  return sum;
}

void InstanceTable::name_late_peers(RankPrefetch& prefetch, RankKey key) const {
  if (ranks_.size() < 2) return;
  bool rank_changed = false;
  for (StepPrefetch& s : prefetch.steps) {
    bool changed = false;
    for (UnitPrefetch& u : s.units) {
      if (u.all_gather_ordinal < 0) continue;
      auto found = instances_.find(
          InstanceId{CollectiveKind::AllGather, u.all_gather_group, u.all_gather_by_seq, u.all_gather_ordinal});
      if (found == instances_.end()) continue;
      const Instance& in = found->second;
      const int64_t mine = u.all_gather_wall_ns;
      // The peer that arrived last, when after this rank: the first in rank order of those that did.
      if (in.last_ns > mine && !(in.last_lo == key)) {
        const int64_t late = model::sat_sub(in.last_ns, mine);  // wall times from the file: any int64
        if (late > u.late_peer_ns) u.late_peer = in.last_lo.rank, u.late_peer_ns = late;
      }
      // Issued in time and not held by the limiter or a reduce-scatter: a peer's lateness may explain it.
      const bool ran_in_time =
          u.cause == Cause::LongerThanCompute || u.cause == Cause::NoComputeUnderIt || u.cause == Cause::StartedLate;
      if (ran_in_time && u.late_peer >= 0 && u.late_peer_ns >= kLatePeerShare * double(u.exposed_wait_ns) &&
          u.exposed_wait_ns > 0) {
        u.cause = Cause::LatePeer;
        changed = true;
      }
    }
    if (changed) judge_step(s), rank_changed = true;
  }
  if (rank_changed) judge_run(prefetch);
}

}  // namespace shardscope::metrics
