// Rows the trace has no track for, derived from a rank's events: each row a list of references into the
// rank's tracks (never a copy of an event) with its own lanes, so the timeline draws, hit-tests and folds it
// as it does a track, and a click lands on the real event. Each kind of derived row is a group of its own
// (RowGroup), registered once in derived_rows.cc: a new one is a file pair deriving its rows from a rank, its
// RowGroup value and one registration line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/index.h"
#include "model/trace.h"
#include "viewer/model/level_of_detail.h"

namespace shardscope::viewer {

// In the order a rank shows them: where work is issued, then where it runs, then what was derived from
// both (FSDP units), then what was measured.
enum class RowGroup : uint8_t { CpuThreads, CudaApi, UserRanges, GpuStreams, Communication, FsdpUnits, Counters };
inline constexpr int kRowGroups = 7;

struct DerivedRow {
  RowGroup group{};
  std::string label;
  std::vector<model::EventRef> refs;  // in time order (model::event_before)
  std::vector<uint16_t> depth;        // per ref: its lane, at most kMaxLanes - 1
  TrackIndex index;                   // lanes over positions in refs
  uint32_t folded = 0;                // refs deeper than kMaxLanes drawn in the last lane
  uint16_t folded_lanes = 0;          // the lanes they came from
  RefEvents events(const model::Rank& rank) const { return {&rank, &refs}; }
  model::EventRef event(uint32_t position) const { return refs[position]; }
  // The position of `ref` in refs, if this row holds it (a binary search by time).
  std::optional<uint32_t> position_of(const model::Rank& rank, model::EventRef ref) const;
  size_t bytes() const;
};

// A derived row from its events (any order): sorted by time, overlapping ones in lanes (first lane free),
// lanes past kMaxLanes folded into the last, as a device stream's.
DerivedRow make_derived_row(const model::Rank& rank, RowGroup group, std::string label,
                            std::vector<model::EventRef> refs);

// One kind of derived row: its group and how a rank's rows are found (none: the rank gets no group).
struct DerivedGroup {
  RowGroup group;
  std::vector<DerivedRow> (*derive)(const model::Rank& rank);
};
const std::vector<DerivedGroup>& derived_groups();

// Every registered group's rows for `rank`, group after group.
std::vector<DerivedRow> derive_rows(const model::Rank& rank);

}  // namespace shardscope::viewer
