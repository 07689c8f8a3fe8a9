#include "viewer/model/across_ranks.h"

#include <algorithm>
#include <set>

#include "analyzer/metrics/clock_map.h"
#include "model/saturating.h"

namespace shardscope::viewer {

TrackChoice choice_of(const model::Track& track) {
  if (track.kind == model::TrackKind::Communication) return TrackChoice::Communication;
  size_t comm = 0, compute = 0;
  for (const model::Event& e : track.events) {
    if (e.cls == model::IntervalClass::Communication) ++comm;
    else if (e.cls == model::IntervalClass::Compute)
      ++compute;
  }
  if (comm > compute) return TrackChoice::Communication;
  return compute > 0 ? TrackChoice::Compute : TrackChoice::Host;
}

AcrossRanks::AcrossRanks(const analysis::AnalysedRun& run) : run_(&run) {
  const size_t n = run.trace.ranks.size();
  by_id_.resize(n);
  ids_.resize(n);
  choices_.resize(n);
  for (size_t r = 0; r < n; ++r) {
    const model::Rank& rank = run.trace.ranks[r];
    // The analyzer's own naming of instances, so the ids here are the ones its stragglers and pairs carry.
    for (metrics::CollectiveRef& c : metrics::instance_ids(rank)) {
      by_id_[r].emplace(c.id, model::EventRef{c.track, c.index});
      ids_[r].emplace(std::pair(c.track, c.index), std::move(c.id));
    }
    for (const model::Track& t : rank.tracks) choices_[r].push_back(choice_of(t));
  }
  const std::vector<metrics::StragglerInstance>& in = run.report.stragglers.instances;
  for (size_t i = 0; i < in.size(); ++i)
    stragglers_.emplace(metrics::InstanceId{in[i].kind, in[i].group, in[i].by_seq, int64_t(in[i].ordinal)}, i);
}

std::vector<int64_t> AcrossRanks::steps() const {
  std::set<int64_t> out;
  if (run_)
    for (const model::Rank& r : run_->trace.ranks)
      for (const model::Step& s : r.steps) out.insert(s.number);
  return {out.begin(), out.end()};
}

std::vector<uint32_t> AcrossRanks::tracks_of(uint32_t rank, TrackChoice choice) const {
  std::vector<uint32_t> out;
  for (uint32_t t = 0; t < choices_[rank].size(); ++t)
    if (choices_[rank][t] == choice) out.push_back(t);
  return out;
}

std::vector<RankRow> AcrossRanks::on_step(int64_t step, TrackChoice choice) const {
  std::vector<RankRow> rows;
  if (!run_) return rows;
  for (uint32_t r = 0; r < run_->trace.ranks.size(); ++r) {
    RankRow row;
    row.rank = r;
    row.tracks = tracks_of(r, choice);
    for (const model::Step& s : run_->trace.ranks[r].steps)
      if (s.number == step) {
        row.origin_ns = s.start_ns;
        break;
      }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<RankRow> AcrossRanks::on_instance(const metrics::InstanceId& id, TrackChoice choice,
                                              std::optional<uint32_t> asked_by) const {
  std::vector<RankRow> rows;
  if (!run_) return rows;
  const metrics::StragglerInstance* s = straggler(id);
  int late_peer = -1;
  if (asked_by && *asked_by < run_->trace.ranks.size())
    if (const metrics::UnitPrefetch* u = prefetch_pair(*asked_by, id)) late_peer = u->late_peer;
  std::vector<int64_t> wall(run_->trace.ranks.size(), INT64_MAX);
  int64_t first = INT64_MAX;
  for (uint32_t r = 0; r < run_->trace.ranks.size(); ++r) {
    const model::Rank& rank = run_->trace.ranks[r];
    RankRow row;
    row.rank = r;
    row.tracks = tracks_of(r, choice);
    row.instance = find(r, id);
    if (row.instance) {
      wall[r] = metrics::ClockMap(rank.clock_sync)
                    .to_realtime(rank.tracks[row.instance->track].events[row.instance->index].ts_ns);
      first = std::min(first, wall[r]);
    }
    row.last = s && s->last_rank == rank.rank;
    row.late_peer = late_peer >= 0 && late_peer == rank.rank;
    rows.push_back(std::move(row));
  }
  for (RankRow& row : rows)
    if (row.instance) {
      const model::Event& e = run_->trace.ranks[row.rank].tracks[row.instance->track].events[row.instance->index];
      row.origin_ns = model::sat_sub(e.ts_ns, model::sat_sub(wall[row.rank], first));
    }
  return rows;
}

int AcrossRanks::rank_number(uint32_t rank) const {
  return run_ && rank < run_->trace.ranks.size() ? run_->trace.ranks[rank].rank : -1;
}

std::optional<model::EventRef> AcrossRanks::find(uint32_t rank, const metrics::InstanceId& id) const {
  if (rank >= by_id_.size()) return std::nullopt;
  auto it = by_id_[rank].find(id);
  if (it == by_id_[rank].end()) return std::nullopt;
  return it->second;
}

std::optional<metrics::InstanceId> AcrossRanks::instance_of(uint32_t rank, model::EventRef event) const {
  if (rank >= ids_.size()) return std::nullopt;
  auto it = ids_[rank].find({event.track, event.index});
  if (it == ids_[rank].end()) return std::nullopt;
  return it->second;
}

const metrics::StragglerInstance* AcrossRanks::straggler(const metrics::InstanceId& id) const {
  auto it = stragglers_.find(id);
  return it == stragglers_.end() ? nullptr : &run_->report.stragglers.instances[it->second];
}

bool AcrossRanks::arrived_last(uint32_t rank, model::EventRef event) const {
  std::optional<metrics::InstanceId> id = instance_of(rank, event);
  if (!id) return false;
  const metrics::StragglerInstance* s = straggler(*id);
  return s && s->last_rank == run_->trace.ranks[rank].rank;
}

const metrics::UnitPrefetch* AcrossRanks::prefetch_pair(uint32_t rank, const metrics::InstanceId& id) const {
  if (!run_ || rank >= run_->report.ranks.size()) return nullptr;
  for (const metrics::StepPrefetch& s : run_->report.ranks[rank].prefetch.steps)
    for (const metrics::UnitPrefetch& u : s.units) {
      if (!u.all_gather.valid()) continue;
      std::optional<metrics::InstanceId> at =
          instance_of(rank, {uint32_t(u.all_gather.track), uint32_t(u.all_gather.index)});
      if (at && *at == id) return &u;
    }
  return nullptr;
}

}  // namespace shardscope::viewer
