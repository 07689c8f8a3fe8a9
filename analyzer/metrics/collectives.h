// Per-collective statistics of one rank (count, bytes, time, algorithm and bus bandwidth as nccl-tests
// defines them) and stragglers across ranks, matched by collective instance rather than by wall clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/trace.h"

namespace shardscope::metrics {

// Why a collective's figure is missing (None: it is there). Bytes and both bandwidths need the message
// size; the bus bandwidth also the group size, where the kind's factor depends on it.
enum class CollectiveNa : uint8_t { None, NoMessageSize, SizedTakeNoTime, NoGroupSizeForBusbw, NoGroupSize };

struct CollectiveStats {
  model::CollectiveKind kind = model::CollectiveKind::None;
  int64_t count = 0;
  int64_t time_ns = 0;              // summed durations
  int64_t bytes = 0;                // summed over the instances whose size the trace says
  int64_t sized_count = 0;          // how many those are
  int64_t sized_time_ns = 0;        // and their summed durations
  double bus_bytes = 0;             // Σ bytes × busbw_factor(kind, group size)
  int group_size = 0;               // the largest group seen
  int64_t sized_without_group = 0;  // sized instances whose bus factor needs the group size the trace does not give
  // Set by the reduce across ranks (InstanceTable::fastest_time): Σ over these instances of the fastest
  // rank's time. Unset with one rank, or when the ranks' instance counts differ.
  std::optional<int64_t> link_ns;
  // Share of this rank's collective time spent beyond the fastest rank's: waiting for peers, not transfer.
  std::optional<double> wait_pct() const;
  std::optional<double> algbw_gbps() const;  // GB/s (1e9 bytes), n/a when no sizes are known
  std::optional<double> busbw_gbps() const;
  CollectiveNa bytes_na() const;
  CollectiveNa bandwidth_na() const;
  CollectiveNa busbw_na() const;
  CollectiveNa group_na() const;
  // Only some instances carry a size: bytes and bandwidths cover those (sized_count of count) only.
  bool partly_sized() const { return sized_count > 0 && sized_count < count; }
};

// Device communication events of the rank whose start lies in [lo, hi), by kind (sorted by kind).
std::vector<CollectiveStats> collective_stats(const model::Rank& rank, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX);

struct StragglerInstance {
  model::CollectiveKind kind;
  size_t ordinal = 0;      // the n-th collective of this kind (of its group) on every rank, or its sequence number
  int last_rank = 0;       // whose kernel started last
  int64_t late_by_ns = 0;  // its start minus the next-latest rank's start (both on the wall clock)
  int64_t spread_ns = 0;   // its start minus the earliest rank's start
  bool by_seq = false;     // `ordinal` is the process group's sequence number
  std::string group;       // the process group's name, "" unknown (with kind and ordinal: the instance's id)
};

struct StragglerRank {
  int rank = 0;
  size_t times_last = 0;
  int64_t total_late_by_ns = 0, max_late_by_ns = 0;
};

// What limits the matching, with its parameters.
struct StragglerNote {
  enum class Code : uint8_t {
    NoClockSync,   // no rank maps its clock onto the wall clock: arrivals compared on raw trace clocks
    SomeUnmapped,  // `ranks` carry no clock_sync pairs, the others do: no straggler analysis (ClocksNotAnchored)
    CountsDiffer,  // `rank` has `here` collectives of `kind`, `other_rank` has `there`: the first min matched
  };
  Code code = Code::NoClockSync;
  std::vector<int> ranks;
  int rank = 0, other_rank = 0;
  size_t here = 0, there = 0;
  model::CollectiveKind kind = model::CollectiveKind::None;
};

// ClocksNotAnchored: some ranks map their clock onto the wall clock and others carry no pairs, so their
// arrivals sit on clocks with no known relation (the SomeUnmapped note names those ranks).
enum class StragglersNa : uint8_t { None, OneRank, NoCommonCollective, ClocksNotAnchored };

// How collective instances were matched across ranks: by (process group, sequence number) where the traces
// carry them, by place among each rank's collectives of a kind (within its process group, where named)
// otherwise; Mixed when some were matched each way.
enum class Pairing : uint8_t { None, Position, Sequence, Mixed };

struct Stragglers {
  Pairing pairing = Pairing::None;
  std::vector<StragglerInstance> instances;          // every matched instance
  std::vector<StragglerRank> ranks;                  // every rank, in rank order
  std::vector<StragglerNote> notes;                  // why some instances could not be matched
  StragglersNa not_applicable = StragglersNa::None;  // why there is no straggler analysis at all
};

// Matches the n-th collective of each kind across ranks (ranks issue collectives in the same order, so the
// n-th all_gather on rank 0 is the same collective as the n-th on rank 1, whatever the clocks say), then
// compares arrivals on the wall clock, each rank's timestamps mapped through its own clock_sync pairs.
Stragglers find_stragglers(const model::Trace& trace);

}  // namespace shardscope::metrics
