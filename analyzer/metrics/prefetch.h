// The BACKWARD_PRE verification. In backward, units run u_L … u_1; for each backward compute BC_i and the
// next unit's all-gather AG_{i-1}: issue lead (start of BC_i − issue of AG_{i-1}), hidden share
// (|AG_{i-1} ∩ C| / |AG_{i-1}|) and exposed wait (the part of AG_{i-1} not covered by compute before BC_{i-1}
// starts). Each step gets a verdict and, when not effective, the cause read off the timeline; the run gets a
// verdict from its steady-state steps. Results are data pointing at the events judged; sentences are made
// where they are rendered (analyzer/report/prefetch_render.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/trace.h"

namespace shardscope::metrics {

// Where an event lives: rank.tracks[track].events[index] of the rank the result belongs to.
struct EventRef {
  int32_t track = -1;
  int32_t index = -1;
  bool valid() const { return track >= 0; }
};

enum class Verdict { Effective, NotEffective, NotApplicable };

// What kept a backward all-gather from hiding behind compute, in the order it is looked for.
enum class Cause : uint8_t {
  None,
  IssuedLate,                 // issued after the compute it should hide had begun
  Throttled,                  // the rate limiter (limit_all_gathers) held its issue back
  QueuedBehindReduceScatter,  // issued in time, but it ran only after a reduce-scatter on its own stream
  StartedLate,                // issued in time, but started only after that compute had ended (its stream or
                              // thread busy with other work)
  LatePeer,                   // another rank arrived at the collective late
  LongerThanCompute,          // issued in time, ran at once, but lasted longer than the compute under it
  NoComputeUnderIt,           // issued in time and short enough, but ran while no compute ran (the compute
                              // began late: on a CPU run, its thread was waiting for a core)
};
inline constexpr size_t kCauseCount = 8;

enum class NotApplicable : uint8_t {
  None,
  NoUnitCompute,        // rank: no per-unit backward compute ranges
  NoUnitAllGathers,     // rank: no all-gathers tagged with their unit (NO_SHARD, SHARD_GRAD_OP, untagged)
  FewerThanTwoUnits,    // step: fewer than two re-gathered units computed backward (count: how many)
  NoBackwardAllGather,  // step: no unit pair had its all-gather in this step (count: the pairs)
};

struct UnitPrefetch {
  int unit = -1;                               // i: the unit whose backward compute BC_i should hide AG_{i-1}
  int next_unit = -1;                          // i-1
  EventRef compute, all_gather, next_compute;  // BC_i, AG_{i-1}, BC_{i-1}
  EventRef reduce_scatter;                     // the one it queued behind, when serialized_behind_rs
  int64_t compute_start_ns = 0, compute_end_ns = 0, next_compute_start_ns = 0;
  int64_t compute_issued_ns = 0;  // BC_i's first launch on a GPU, its start on a CPU
  int64_t issued_ns = 0, ag_start_ns = 0, ag_end_ns = 0;
  int64_t issue_lead_ns = 0;  // > 0: issued before BC_i was (prefetch order): compute_issued_ns − issued_ns
  int64_t ag_ns = 0;          // |AG_{i-1}|
  int64_t hidden_ns = 0;      // |AG_{i-1} ∩ C|
  int64_t exposed_wait_ns = 0;
  int64_t queued_ns = 0;  // AG start − AG issue
  bool serialized_behind_rs = false;
  bool throttled = false;
  int64_t throttled_from_ns = 0;  // when throttled: the limiter's hit
  // AG_{i-1}'s instance across ranks (metrics::InstanceId): its place among the rank's all-gathers of its
  // process group, or that group's sequence number.
  int64_t all_gather_ordinal = -1;
  std::string all_gather_group;
  bool all_gather_by_seq = false;
  int64_t all_gather_wall_ns = 0;  // its start on the wall clock
  int late_peer = -1;              // the rank that arrived last at this all-gather, when it was not this one
  int64_t late_peer_ns = 0;        // by how much after this rank (wall clock)
  Cause cause = Cause::None;       // set when the pair is not hidden (late, or under half hidden)
  double hidden_share() const { return ag_ns > 0 ? double(hidden_ns) / double(ag_ns) : 0.0; }
};

struct StepPrefetch {
  int64_t step = 0;
  bool warm_up = false;  // left out of the run's verdict
  bool aborted = false;  // the step did not complete (model::Step::aborted): left out of the run's verdict too
  std::vector<UnitPrefetch> units;
  Verdict verdict = Verdict::NotApplicable;
  NotApplicable na = NotApplicable::None;
  size_t na_count = 0;
  Cause cause = Cause::None;  // not effective: the cause behind the most exposed wait
  size_t missing_pairs = 0;   // unit pairs with no backward all-gather found
  int64_t ag_ns = 0, hidden_ns = 0, exposed_wait_ns = 0;
  double hidden_share() const { return ag_ns > 0 ? double(hidden_ns) / double(ag_ns) : 0.0; }
  size_t count(Cause c) const;
  // The unit pair that shows the cause best (the most exposed of its cause); nullptr without a cause.
  const UnitPrefetch* example() const;
};

struct RankPrefetch {
  int rank = 0;
  std::string configured;    // run_config backward_prefetch ("pre", "post", "none"), empty when unknown
  std::optional<int> limit;  // limit_all_gathers, when on
  std::vector<StepPrefetch> steps;
  NotApplicable na = NotApplicable::None;                          // set: nothing could be checked on this rank
  model::UnitIdentity unit_identity = model::UnitIdentity::Named;  // how units were identified
  size_t forward_all_gathers = 0;                                  // all-gathers issued in forward
  size_t forward_throttled = 0;                                    // of them, held back by the rate limiter
  // The run's verdict (report::run_rule): from the steady-state steps.
  Verdict verdict = Verdict::NotApplicable;
  size_t steady_effective = 0, steady_not_effective = 0;
  int64_t steady_ag_ns = 0, steady_hidden_ns = 0;
  double steady_hidden_share() const {
    return steady_ag_ns > 0 ? double(steady_hidden_ns) / double(steady_ag_ns) : 0.0;
  }
};

struct PrefetchCheck {
  std::vector<RankPrefetch> ranks;
  Verdict verdict = Verdict::NotApplicable;  // not effective when any rank is; effective when some rank is
};

// A step is effective when its all-gathers are issued in prefetch order and at least this share of its
// backward all-gather time is hidden; a pair under it gets a cause.
inline constexpr double kHiddenShareThreshold = 0.5;
// A later rank explains a pair's exposure when it arrived at least this share of the exposed wait late.
inline constexpr double kLatePeerShare = 0.5;

// The run's verdict from its ranks' (any order, any grouping): not effective when any rank is; effective when
// some rank is.
Verdict combine(Verdict a, Verdict b);

// One rank alone (no late-peer causes: those need the other ranks).
RankPrefetch check_prefetch(const model::Rank& rank);
// Every rank, each all-gather compared with the same all-gather on the other ranks on the wall clock.
PrefetchCheck check_prefetch(const model::Trace& trace);

}  // namespace shardscope::metrics
