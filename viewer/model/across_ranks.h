// Ranks side by side: one kind of track (communication, compute or host) of every rank, a row per rank, each
// rank shifted so that a chosen step or a chosen collective instance lines up at x = 0, so a late rank shows
// at a glance. Who arrived last at each collective and a prefetch pair's late peer come from the analysis
// (the report's stragglers, the prefetch check); this only finds the events they point at and the shifts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "analyzer/analysis/run.h"
#include "analyzer/metrics/instances.h"
#include "model/index.h"

namespace shardscope::viewer {

enum class TrackChoice : uint8_t { Communication, Compute, Host };

// A track's kind for the side-by-side view, by what it carries: communication tracks and streams that hold
// more collectives than compute (an NCCL stream); compute: other tracks with compute (GPU streams, a CPU
// run's compute thread); host: the rest.
TrackChoice choice_of(const model::Track& track);

struct RankRow {
  uint32_t rank = 0;             // index into trace.ranks (== the layout's and the report's ranks)
  std::vector<uint32_t> tracks;  // the rank's tracks of the chosen kind
  // The rank's own time drawn at x = 0; none when the rank has no such step or instance.
  std::optional<int64_t> origin_ns;
  std::optional<model::EventRef> instance;  // aligned on an instance: the rank's collective of it
  bool last = false;                        // the straggler analysis names this rank last at the aligned instance
  bool late_peer = false;                   // the late peer of the asking rank's prefetch pair at this all-gather
};

class AcrossRanks {
 public:
  AcrossRanks() = default;
  // `run` must outlive this (its trace is kept with the events: analysis::analyse_run).
  explicit AcrossRanks(const analysis::AnalysedRun& run);

  // The step numbers of the run's ranks, ascending (any rank's).
  std::vector<int64_t> steps() const;
  // Each rank's step `step` starts at x = 0.
  std::vector<RankRow> on_step(int64_t step, TrackChoice choice) const;
  // The instance on the shared wall clock (each rank's trace clock mapped through its clock_sync pairs, as
  // the straggler analysis compares arrivals): the earliest arrival at x = 0, every other rank at its
  // arrival after it. `asked_by`: the rank whose prefetch pair (or slice) asked, whose late peer is marked.
  std::vector<RankRow> on_instance(const metrics::InstanceId& id, TrackChoice choice,
                                   std::optional<uint32_t> asked_by = {}) const;

  size_t rank_count() const { return by_id_.size(); }
  int rank_number(uint32_t rank) const;  // trace.ranks[rank].rank: the number the analysis names ranks by
  std::optional<model::EventRef> find(uint32_t rank, const metrics::InstanceId& id) const;
  std::optional<metrics::InstanceId> instance_of(uint32_t rank, model::EventRef event) const;
  // The straggler analysis's last arrival at `id` (rank number), or none when it did not match the instance.
  const metrics::StragglerInstance* straggler(const metrics::InstanceId& id) const;
  // Whether `rank` arrived last at the instance of its collective `event` (an outline on every such slice).
  bool arrived_last(uint32_t rank, model::EventRef event) const;
  // The prefetch pair of `rank` whose all-gather is `id` (null when none).
  const metrics::UnitPrefetch* prefetch_pair(uint32_t rank, const metrics::InstanceId& id) const;

 private:
  std::vector<uint32_t> tracks_of(uint32_t rank, TrackChoice choice) const;
  const analysis::AnalysedRun* run_ = nullptr;
  std::vector<std::map<metrics::InstanceId, model::EventRef>> by_id_;              // per rank
  std::vector<std::map<std::pair<uint32_t, uint32_t>, metrics::InstanceId>> ids_;  // per rank: (track, index)
  std::map<metrics::InstanceId, size_t> stragglers_;                               // into report.stragglers.instances
  std::vector<std::vector<TrackChoice>> choices_;                                  // per rank, per track
};

}  // namespace shardscope::viewer
