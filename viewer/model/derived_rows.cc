#include "viewer/model/derived_rows.h"

#include <algorithm>
#include <tuple>

#include "viewer/model/fsdp_units.h"
#include "viewer/model/timeline_layout.h"

namespace shardscope::viewer {

const std::vector<DerivedGroup>& derived_groups() {
  static const std::vector<DerivedGroup> groups = {
      {RowGroup::FsdpUnits, fsdp_unit_rows},
  };
  return groups;
}

std::vector<DerivedRow> derive_rows(const model::Rank& rank) {
  std::vector<DerivedRow> out;
  for (const DerivedGroup& g : derived_groups())
    for (DerivedRow& row : g.derive(rank)) out.push_back(std::move(row));
  return out;
}

size_t DerivedRow::bytes() const {
  return sizeof(DerivedRow) + label.capacity() + refs.capacity() * sizeof(model::EventRef) +
         depth.capacity() * sizeof(uint16_t) + index.bytes();
}

std::optional<uint32_t> DerivedRow::position_of(const model::Rank& rank, model::EventRef ref) const {
  const RefEvents ev = events(rank);
  const model::Event& e = rank.tracks[ref.track].events[ref.index];
  uint32_t lo = 0, hi = uint32_t(refs.size());
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (ev[mid].ts_ns < e.ts_ns) lo = mid + 1;
    else
      hi = mid;
  }
  for (; lo < refs.size() && ev[lo].ts_ns == e.ts_ns; ++lo)
    if (refs[lo] == ref) return lo;
  return std::nullopt;
}

DerivedRow make_derived_row(const model::Rank& rank, RowGroup group, std::string label,
                            std::vector<model::EventRef> refs) {
  DerivedRow row{group, std::move(label), std::move(refs), {}, {}, 0, 0};
  auto at = [&](const model::EventRef& r) -> const model::Event& { return rank.tracks[r.track].events[r.index]; };
  std::sort(row.refs.begin(), row.refs.end(),
            [&](const model::EventRef& a, const model::EventRef& b) { return model::event_before(at(a), at(b)); });
  // Lanes: each event in the first lane whose last event has ended (an all-gather prefetched under the
  // previous unit's compute still overlaps nothing of its own unit, so most units keep one or two lanes).
  std::vector<int64_t> lane_end;
  row.depth.reserve(row.refs.size());
  for (const model::EventRef& r : row.refs) {
    const model::Event& e = at(r);
    size_t l = 0;
    while (l < lane_end.size() && lane_end[l] > e.ts_ns) ++l;
    if (l == lane_end.size()) lane_end.push_back(e.end_ns());
    else
      lane_end[l] = e.end_ns();
    row.depth.push_back(uint16_t(std::min<size_t>(l, UINT16_MAX)));
  }
  std::tie(row.folded, row.folded_lanes) = cap_lanes(row.depth);
  row.index = build_track_index(row.events(rank), row.depth);
  return row;
}

}  // namespace shardscope::viewer
