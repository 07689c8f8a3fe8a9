#include "analyzer/metrics/replay_graph.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analyzer/metrics/instances.h"
#include "analyzer/metrics/rate_limiter.h"
#include "model/index.h"
#include "tracer/format/keys.h"

namespace shardscope::metrics::replay {
namespace {

// A unit's compute as the importers derived it (device time on a GPU): the kernels it holds.
struct UnitRange {
  int64_t ts, end;
  int32_t unit, step;
  bool backward;
  int32_t first = kNone, last = kNone;
};

uint64_t key(uint32_t track, uint32_t index) { return (uint64_t(track) << 32) | index; }

struct RankBuild {
  Graph& g;
  const model::Rank& rank;
  std::vector<std::pair<InstanceId, int32_t>>& collectives;
  const RateLimiter& limiter;
  std::unordered_map<uint64_t, int32_t> launch_op;  // host event → its launch op
  std::map<uint32_t, int32_t> lane_of;              // track → lane
  std::vector<UnitRange> ranges;
  std::vector<int32_t> compute;  // the rank's compute ops by start
  // A run whose device is its host (the trainer on CPU): the ops are the compute thread's unit ranges and the
  // comm threads' collectives, and nothing is launched.
  bool on_host = false;

  int32_t lane(uint32_t track) {
    auto [it, fresh] = lane_of.try_emplace(track, int32_t(g.lanes.size()));
    if (fresh) g.lanes.emplace_back();
    return it->second;
  }

  int32_t add(Op op) {
    g.ops.push_back(op);
    const int32_t at = int32_t(g.ops.size() - 1);
    g.lanes[size_t(op.lane)].push_back(at);
    return at;
  }

  void collect_ranges() {
    const model::StringId fsdp = rank.strings.find(keys::kCatFsdp), fwd = rank.strings.find(keys::kUnitForward),
                          bwd = rank.strings.find(keys::kUnitBackward);
    on_host = std::none_of(rank.tracks.begin(), rank.tracks.end(),
                           [](const model::Track& t) { return t.kind == model::TrackKind::DeviceStream; });
    for (const model::Track& t : rank.tracks)
      for (const model::Event& e : t.events)
        if (e.ph == 'X' && (on_host || e.cat == fsdp) && e.unit >= 0 && (e.name == fwd || e.name == bwd))
          ranges.push_back({e.ts_ns, e.end_ns(), e.unit, e.step, e.name == bwd});
    std::sort(ranges.begin(), ranges.end(), [](const UnitRange& a, const UnitRange& b) { return a.ts < b.ts; });
  }

  Op launch_for(const model::RankIndex& idx, uint32_t t, uint32_t i) {
    Op op;
    const model::LaunchLink* link = idx.launch_of({t, i});
    if (!link) return op;
    auto [it, fresh] = launch_op.try_emplace(key(link->launch.track, link->launch.index), 0);
    if (fresh) {
      const model::Event& h = rank.tracks[link->launch.track].events[link->launch.index];
      Op l;
      l.track = int32_t(link->launch.track), l.index = int32_t(link->launch.index);
      l.role = Role::Launch, l.lane = lane(link->launch.track), l.ts_ns = h.ts_ns;
      it->second = add(l);
    }
    op.launch = it->second;
    return op;
  }

  // The host's blocking syncs, long enough to have waited for something.
  void collect_host_waits() {
    constexpr int64_t kBlockedNs = 20'000;
    for (uint32_t t = 0; t < rank.tracks.size(); ++t) {
      if (rank.tracks[t].kind != model::TrackKind::HostThread) continue;
      for (const model::Event& e : rank.tracks[t].events)
        if (e.ph == 'X' && !e.is_device() && e.dur_ns >= kBlockedNs &&
            rank.str(e.name).find("Synchronize") != std::string_view::npos)
          g.host_waits.push_back({0, lane(t), e.ts_ns, e.end_ns()});
    }
  }

  void collect_ops(const std::map<uint64_t, InstanceId>& ids) {
    const model::StringId fsdp = rank.strings.find(keys::kCatFsdp);
    const model::RankIndex idx = model::index_rank(rank);
    // A CPU run without unit ranges (DDP on Gloo) has no compute the model knows: nothing to replay.
    if (on_host) return ranges.empty() ? void() : collect_host_ops(ids);
    for (uint32_t t = 0; t < rank.tracks.size(); ++t) {
      const model::Track& track = rank.tracks[t];
      if (track.kind != model::TrackKind::DeviceStream) continue;
      for (uint32_t i = 0; i < track.events.size(); ++i) {
        const model::Event& e = track.events[i];
        // A sync is the host waiting on the device, not work of the stream's own.
        if (e.ph != 'X' || !e.is_device() || e.cat == fsdp || e.cls == model::IntervalClass::Sync) continue;
        Op op = launch_for(idx, t, i);
        op.track = int32_t(t), op.index = int32_t(i), op.lane = lane(t);
        op.step = e.step, op.unit = e.unit, op.ts_ns = e.ts_ns, op.dur_ns = e.dur_ns, op.own_ns = e.dur_ns;
        if (e.cls != model::IntervalClass::Communication) op.role = Role::Compute, op.unit = -1;
        else if (e.coll == model::CollectiveKind::AllGather && e.unit >= 0)
          op.role = Role::AllGather;
        else
          op.role = e.coll == model::CollectiveKind::ReduceScatter ? Role::ReduceScatter : Role::Comm;
        op.hides = op.role == Role::Compute && e.cls == model::IntervalClass::Compute;
        op.throttled = op.role == Role::AllGather && limiter.throttled(e);
        const int32_t at = add(op);
        if (op.role == Role::Compute) compute.push_back(at);
        if (op.role != Role::Compute)
          if (auto it = ids.find(key(t, i)); it != ids.end()) collectives.emplace_back(it->second, at);
      }
    }
  }

  // On a CPU run: the unit ranges are the compute, the collectives' ranges the communication; each op's
  // step is the one whose range holds its start.
  void collect_host_ops(const std::map<uint64_t, InstanceId>& ids) {
    const model::StringId fwd = rank.strings.find(keys::kUnitForward), bwd = rank.strings.find(keys::kUnitBackward);
    auto step_of = [&](int64_t ts) {
      for (size_t s = 0; s < rank.steps.size(); ++s)
        if (ts >= rank.steps[s].start_ns && ts < rank.steps[s].end_ns) return int32_t(s);
      return int32_t(-1);
    };
    for (uint32_t t = 0; t < rank.tracks.size(); ++t)
      for (uint32_t i = 0; i < rank.tracks[t].events.size(); ++i) {
        const model::Event& e = rank.tracks[t].events[i];
        const bool comm = e.cls == model::IntervalClass::Communication && e.coll != model::CollectiveKind::None;
        if (e.ph != 'X' || (!comm && !(e.unit >= 0 && (e.name == fwd || e.name == bwd)))) continue;
        Op op;
        op.track = int32_t(t), op.index = int32_t(i), op.lane = lane(t);
        op.step = step_of(e.ts_ns), op.unit = comm ? e.unit : -1, op.ts_ns = e.ts_ns, op.dur_ns = e.dur_ns;
        op.own_ns = e.dur_ns;
        op.role = !comm                                                       ? Role::Compute
                  : e.coll == model::CollectiveKind::AllGather && e.unit >= 0 ? Role::AllGather
                  : e.coll == model::CollectiveKind::ReduceScatter            ? Role::ReduceScatter
                                                                              : Role::Comm;
        op.hides =
            op.role == Role::Compute && (e.cls == model::IntervalClass::Compute || e.cls == model::IntervalClass::Host);
        op.throttled = op.role == Role::AllGather && limiter.throttled(e);
        const int32_t at = add(op);
        if (op.role == Role::Compute) compute.push_back(at);
        else if (auto it = ids.find(key(t, i)); it != ids.end())
          collectives.emplace_back(it->second, at);
      }
  }

  // Each unit range's kernels: the compute ops that start inside it.
  void tag_compute() {
    std::sort(compute.begin(), compute.end(), [&](int32_t a, int32_t b) { return g.ops[a].ts_ns < g.ops[b].ts_ns; });
    for (UnitRange& u : ranges) {
      auto lo = std::lower_bound(compute.begin(), compute.end(), u.ts,
                                 [&](int32_t op, int64_t t) { return g.ops[op].ts_ns < t; });
      for (; lo != compute.end() && g.ops[*lo].ts_ns < u.end; ++lo) {
        Op& op = g.ops[*lo];
        op.unit = u.unit, op.backward = u.backward;
        if (u.first == kNone) u.first = *lo;
        u.last = *lo;
      }
    }
    std::erase_if(ranges, [](const UnitRange& u) { return u.first == kNone; });
  }

  // A unit compute's all-gather is the unit's latest that started before it (the one that gathered what it
  // computes with); a reduce-scatter's producer its unit's last backward that ended by its start. A trace
  // without forward ranges (PyTorch FSDP1's) leaves the forward all-gathers with no consumer.
  void tag_collectives() {
    std::vector<int32_t> ags;
    std::map<int32_t, std::vector<int32_t>> ags_of;  // unit → its all-gathers by start
    for (size_t o = 0; o < g.ops.size(); ++o) {
      Op& op = g.ops[o];
      if (op.unit < 0) continue;
      if (op.role == Role::AllGather) ags.push_back(int32_t(o)), ags_of[op.unit].push_back(int32_t(o));
      if (op.role == Role::ReduceScatter)
        for (const UnitRange& u : ranges)
          if (u.unit == op.unit && u.backward && u.end <= op.ts_ns) op.consumer_last = u.last;
    }
    for (auto& [unit, v] : ags_of)
      std::sort(v.begin(), v.end(), [&](int32_t a, int32_t b) { return g.ops[a].ts_ns < g.ops[b].ts_ns; });
    for (size_t k = 0; k < ranges.size(); ++k) {
      auto it = ags_of.find(ranges[k].unit);
      if (it == ags_of.end()) continue;
      auto ag = std::upper_bound(it->second.begin(), it->second.end(), ranges[k].ts,
                                 [&](int64_t t, int32_t o) { return t < g.ops[o].ts_ns; });
      if (ag == it->second.begin()) continue;
      Op& op = g.ops[*--ag];
      if (op.consumer_first != kNone) continue;  // it fed an earlier range already
      op.consumer_first = ranges[k].first, op.consumer_last = ranges[k].last, op.backward = ranges[k].backward;
      if (k > 0 && ranges[k - 1].end <= ranges[k].ts && ranges[k - 1].step == ranges[k].step)
        op.before_first = ranges[k - 1].first, op.before_last = ranges[k - 1].last;
    }
    auto issue = [&](int32_t o) { return g.ops[o].launch != kNone ? g.ops[g.ops[o].launch].ts_ns : g.ops[o].ts_ns; };
    std::stable_sort(ags.begin(), ags.end(), [&](int32_t a, int32_t b) { return issue(a) < issue(b); });
    g.all_gathers.push_back(std::move(ags));
  }
};

// Each lane in measured order; each launch's gap after the previous one on its thread.
void order_lanes(Graph& g) {
  for (std::vector<int32_t>& lane : g.lanes) {
    std::stable_sort(lane.begin(), lane.end(), [&](int32_t a, int32_t b) { return g.ops[a].ts_ns < g.ops[b].ts_ns; });
    for (size_t k = 1; k < lane.size(); ++k)
      if (g.ops[lane[k]].role == Role::Launch) g.ops[lane[k]].gap_ns = g.ops[lane[k]].ts_ns - g.ops[lane[k - 1]].ts_ns;
  }
}

// A collective's own time: what it took after the last rank arrived.
void own_times(Graph& g) {
  for (const std::vector<int32_t>& inst : g.instances) {
    int64_t meet = INT64_MIN;
    for (int32_t o : inst) meet = std::max(meet, g.ops[o].ts_ns);
    for (int32_t o : inst) {
      Op& op = g.ops[o];
      op.own_ns = std::max<int64_t>(0, op.ts_ns + op.dur_ns - std::max(op.ts_ns, meet));
    }
  }
}

}  // namespace

RankGraph build_rank_graph(const model::Rank& rank) {
  RankGraph out;
  Graph& g = out.g;
  const RateLimiter limiter(rank);
  g.ranks.push_back({rank.rank, rank.steps, rank.shape.backward_prefetch, limiter.limit()});
  std::map<uint64_t, InstanceId> ids;
  for (const CollectiveRef& c : instance_ids(rank)) ids.emplace(key(c.track, c.index), c.id);
  RankBuild b{g, rank, out.collectives, limiter, {}, {}, {}, {}};
  b.collect_ranges();
  g.on_host = b.on_host;
  b.collect_ops(ids);
  b.collect_host_waits();
  b.tag_compute();
  b.tag_collectives();
  order_lanes(g);
  return out;
}

Graph join(std::vector<RankGraph> ranks) {
  std::stable_sort(ranks.begin(), ranks.end(),
                   [](const RankGraph& a, const RankGraph& b) { return a.g.ranks[0].rank < b.g.ranks[0].rank; });
  Graph g;
  std::map<InstanceId, std::vector<int32_t>> instances;
  for (RankGraph& rg : ranks) {
    const int32_t r = int32_t(g.ranks.size()), at = int32_t(g.ops.size()), lanes = int32_t(g.lanes.size());
    const auto moved = [&](int32_t& o) { o = o == kNone ? kNone : o + at; };
    for (Op& op : rg.g.ops) {
      op.rank = r, op.lane += lanes;
      for (int32_t* o : {&op.launch, &op.consumer_first, &op.consumer_last, &op.before_first, &op.before_last})
        moved(*o);
      g.ops.push_back(op);
    }
    for (std::vector<int32_t>& lane : rg.g.lanes) {
      for (int32_t& o : lane) moved(o);
      g.lanes.push_back(std::move(lane));
    }
    for (std::vector<int32_t>& ags : rg.g.all_gathers) {
      for (int32_t& o : ags) moved(o);
      g.all_gathers.push_back(std::move(ags));
    }
    for (HostWait h : rg.g.host_waits) h.rank = r, h.lane += lanes, g.host_waits.push_back(h);
    for (const auto& [id, o] : rg.collectives) instances[id].push_back(o + at);
    g.ranks.push_back(std::move(rg.g.ranks[0]));
    g.on_host = g.on_host && rg.g.on_host;
    rg = {};  // each rank's copy goes as it is joined
  }
  for (auto& [id, ops] : instances) {
    if (ops.size() < 2) continue;  // a collective of one rank's trace waits for no one it can see
    for (int32_t o : ops) g.ops[size_t(o)].instance = int32_t(g.instances.size());
    g.instances.push_back(std::move(ops));
  }
  own_times(g);
  return g;
}

Graph build_graph(const model::Trace& trace) {
  std::vector<RankGraph> ranks;
  for (const model::Rank& rank : trace.ranks) ranks.push_back(build_rank_graph(rank));
  return join(std::move(ranks));
}

}  // namespace shardscope::metrics::replay
