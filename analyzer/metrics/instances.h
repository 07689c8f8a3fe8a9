// Collective instances across ranks. Ranks issue their collectives in one order, so the n-th all-gather of
// every rank is one instance; each rank contributes the wall-clock start of its instances (its trace clock
// mapped through its own clock_sync pairs) and is then done with. The table keeps, per instance, only the
// earliest, latest and next-latest arrival: it grows with the instances, not with ranks x instances, and
// tables built from disjoint sets of ranks merge (any grouping, any order) into the table of all of them.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/metrics/collectives.h"
#include "analyzer/metrics/prefetch.h"
#include "model/trace.h"

namespace shardscope::metrics {

// A rank's place in the run: by rank, then by its file's place among the inputs (two files may claim one
// rank). Ties between arrivals go by it, so the result does not depend on the order ranks were added in.
struct RankKey {
  int rank = 0;
  uint64_t order = 0;
  auto operator<=>(const RankKey&) const = default;
};

// One collective instance on one rank, beside its arrival: how long its kernel ran there and what it moved.
struct InstanceSize {
  int64_t dur_ns = 0;
  int64_t bytes = model::kUnknown;
  int32_t group_size = 0;  // 0 unknown
};

// Which instance a collective is across ranks: its process group and sequence number where the trace says
// them (PyTorch's "Seq"), otherwise its place among the rank's collectives of its kind in its group (by
// start): a rank whose trace begins one collective late, or two groups interleaved differently on two
// ranks, still pair right when the sequence numbers are there.
struct InstanceId {
  model::CollectiveKind kind = model::CollectiveKind::None;
  std::string group;    // the process group's name, "" unknown
  bool by_seq = false;  // n is the group's sequence number (else the place)
  int64_t n = 0;
  auto operator<=>(const InstanceId&) const = default;
};

// A collective of a group, or with a sequence number, on one rank.
struct KeyedArrival {
  InstanceId id;
  int64_t wall_ns = 0;
  InstanceSize size;
};

struct RankArrivals {
  RankKey key;
  bool clock_mapped = false;
  // Collectives with neither group nor sequence number, matched by place.
  std::map<model::CollectiveKind, std::vector<int64_t>> wall_start;  // per kind, in issue (start) order
  std::map<model::CollectiveKind, std::vector<InstanceSize>> size;   // per kind, in the same order (may be absent)
  std::vector<KeyedArrival> keyed;                                   // the others
};

// Each collective event of the rank (by track and index) with its instance, in start order per kind.
struct CollectiveRef {
  uint32_t track, index;
  InstanceId id;
};
std::vector<CollectiveRef> instance_ids(const model::Rank& rank);

// A collective kind across the ranks of a run, each instance timed by its fastest rank: that rank's kernel
// spent (almost) no time waiting for peers, so its time is the link's, as nccl-tests and TraceLens time an
// instance. A rank's time beyond the fastest is waiting for peers (skew), not transfer.
struct LinkStats {
  model::CollectiveKind kind = model::CollectiveKind::None;
  uint64_t instances = 0;        // those every rank has
  int64_t fastest_ns = 0;        // Σ the fastest rank's kernel time
  int64_t bytes = 0;             // Σ over the instances whose size a rank says
  uint64_t sized = 0;            // how many those are
  int64_t sized_fastest_ns = 0;  // and their fastest times
  double bus_bytes = 0;          // Σ bytes × busbw_factor(kind, group size)
  uint64_t sized_without_group = 0;
  int group_size = 0;                        // the largest group seen
  std::optional<double> algbw_gbps() const;  // bytes / fastest time, 1e9 bytes a second
  std::optional<double> busbw_gbps() const;
};

// The rank's device collectives, per kind, in start order, on the wall clock.
RankArrivals arrivals(const model::Rank& rank, RankKey key);
// The same from the rank's instance_ids(), where the caller has them already.
RankArrivals arrivals(const model::Rank& rank, RankKey key, const std::vector<CollectiveRef>& ids);

// Sets each unit pair's all_gather_ordinal and all_gather_wall_ns: where its all-gather falls among the rank's
// all-gathers, the instance the other ranks are compared at.
void locate_all_gathers(const model::Rank& rank, RankPrefetch& prefetch);
void locate_all_gathers(const model::Rank& rank, RankPrefetch& prefetch, const std::vector<CollectiveRef>& ids);

struct Instance {
  int64_t first_ns = INT64_MAX;                           // the earliest arrival
  int64_t last_ns = INT64_MIN, next_last_ns = INT64_MIN;  // the latest and the next-latest (equal on a tie)
  RankKey last_lo, last_hi;  // the first and the last rank (in rank order) that arrived at last_ns
  uint32_t ranks = 0;
  int64_t fastest_ns = INT64_MAX;   // the shortest kernel time any rank had (INT64_MAX: none said)
  int64_t bytes = model::kUnknown;  // the largest size a rank says
  int32_t group_size = 0;
  void add(int64_t ns, RankKey key, const InstanceSize& size = {INT64_MAX, model::kUnknown, 0});
  void merge(const Instance& other);
};

class InstanceTable {
 public:
  using Row = std::map<InstanceId, Instance>;
  void add(const RankArrivals& rank);
  void merge(const InstanceTable& other);

  // The rank that arrives last at each instance every rank has, and how often each rank is that one.
  Stragglers stragglers() const;
  // Per kind, the instances every rank has, each timed by its fastest rank; empty with fewer than two ranks.
  std::vector<LinkStats> links() const;
  // Σ the fastest rank's time over a rank's `count` instances of `kind`, when every rank has exactly that
  // many and each instance's time is known: the part of the rank's collective time the link accounts for.
  std::optional<int64_t> fastest_time(model::CollectiveKind kind, uint64_t count) const;

  // Names the rank that arrived last at each of this rank's backward all-gathers (when not this one) and
  // re-judges what a late peer explains (kLatePeerShare).
  void name_late_peers(RankPrefetch& prefetch, RankKey key) const;

  size_t rank_count() const { return ranks_.size(); }
  const Row& instances() const { return instances_; }

  // Per rank: how many instances of each kind it has (the straggler notes compare them) and whether its
  // clock maps onto the wall clock.
  struct RankCounts {
    RankKey key;
    bool clock_mapped = false;
    std::map<model::CollectiveKind, uint64_t> count;
  };
  const std::vector<RankCounts>& ranks() const { return ranks_; }
  // For transport (MPI): rebuilt from its parts.
  static InstanceTable from_parts(Row instances, std::vector<RankCounts> ranks);

 private:
  // Whether every rank of the instance's group (of those in the table) arrived at it.
  bool complete(const InstanceId& id, const Instance& in) const;

  Row instances_;
  std::vector<RankCounts> ranks_;
};

}  // namespace shardscope::metrics
