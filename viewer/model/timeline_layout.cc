#include "viewer/model/timeline_layout.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <thread>

namespace shardscope::viewer {

size_t RankView::bytes() const {
  size_t b = sizeof(RankView) + tracks.capacity() * sizeof(TrackIndex) + host_colours.capacity() * sizeof(Rgb) +
             folded.capacity() * sizeof(folded[0]) + sync_lane.capacity() +
             (derived.capacity() - derived.size()) * sizeof(DerivedRow);
  for (const TrackIndex& t : tracks) b += t.bytes();
  for (const DerivedRow& d : derived) b += d.bytes();
  for (const auto& d : index.depth) b += d.capacity() * sizeof(uint16_t) + sizeof(d);
  b += index.launches.capacity() * sizeof(model::LaunchLink);
  if (args) b += args->memory_bytes();
  return b;
}

std::string track_label(const model::Track& track) {
  std::string kind = track.kind == model::TrackKind::HostThread     ? "thread"
                     : track.kind == model::TrackKind::DeviceStream ? "stream"
                                                                    : "comm";
  if (!track.name.empty()) return track.name;
  return kind + " " + std::to_string(track.tid);
}

std::pair<uint32_t, uint16_t> cap_lanes(std::vector<uint16_t>& depth, uint16_t cap) {
  std::pair<uint32_t, uint16_t> folded{0, 0};
  uint16_t deepest = 0;
  for (uint16_t& d : depth)
    if (d >= cap) {
      deepest = std::max(deepest, d);
      ++folded.first;
      d = cap - 1;
    }
  if (deepest) folded.second = uint16_t(deepest - (cap - 1));
  return folded;
}

StreamLanes stream_lanes(const model::Track& track, std::vector<uint16_t>& depth) {
  const std::vector<model::Event>& events = track.events;
  depth.assign(events.size(), 0);
  StreamLanes out;
  // Nesting as model::index_rank counts it, over the stream's other records alone: a sync record opens
  // nothing, so a kernel under one stays in the lane it has without it.
  std::vector<int64_t> open;
  for (size_t i = 0; i < events.size(); ++i) {
    const model::Event& e = events[i];
    if (e.cls == model::IntervalClass::Sync) {
      out.sync_lane = true;
      continue;
    }
    while (!open.empty() && open.back() <= e.ts_ns) open.pop_back();
    depth[i] = uint16_t(std::min<size_t>(open.size(), UINT16_MAX));
    if (e.ph == 'X' && e.dur_ns > 0) open.push_back(e.end_ns());
  }
  out.folded = cap_lanes(depth, out.sync_lane ? kMaxLanes - 1 : kMaxLanes);
  if (!out.sync_lane) return out;
  uint16_t lanes = 0;
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].cls != model::IntervalClass::Sync) lanes = std::max<uint16_t>(lanes, depth[i] + 1);
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].cls == model::IntervalClass::Sync) depth[i] = lanes;
  return out;
}

namespace {

void build_view(const model::Rank& rank, RankView& view) {
  view.rank = &rank;
  view.index = model::index_rank(rank);
  // The lane cap on streams and communication tracks (host threads keep their call nesting).
  view.folded.assign(rank.tracks.size(), {0, 0});
  view.sync_lane.assign(rank.tracks.size(), 0);
  for (size_t t = 0; t < rank.tracks.size(); ++t)
    if (rank.tracks[t].kind == model::TrackKind::DeviceStream) {
      const StreamLanes s = stream_lanes(rank.tracks[t], view.index.depth[t]);
      view.folded[t] = s.folded;
      view.sync_lane[t] = s.sync_lane;
    } else if (rank.tracks[t].kind != model::TrackKind::HostThread) {
      view.folded[t] = cap_lanes(view.index.depth[t]);
    }
  view.host_colours = host_colours_by_category(rank.strings);
  view.tracks.reserve(rank.tracks.size());
  for (size_t t = 0; t < rank.tracks.size(); ++t)
    view.tracks.push_back(build_track_index(rank.tracks[t], view.index.depth[t]));
  view.derived = derive_rows(rank);
}

}  // namespace

TimelineLayout::TimelineLayout(const model::Trace& trace, const LayoutOptions& options) : options_(options) {
  // The ranks' side tables are independent: built in parallel, one rank per task.
  ranks_.resize(trace.ranks.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t r; (r = next++) < trace.ranks.size();) {
      build_view(trace.ranks[r], ranks_[r]);
      ranks_[r].args = trace.args_of(r);
    }
  };
  size_t threads = std::min<size_t>(trace.ranks.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();

  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  int y = 0;
  for (uint32_t r = 0; r < ranks_.size(); ++r) {
    const RankView& view = ranks_[r];
    const model::Rank& rank = *view.rank;
    for (size_t t = 0; t < rank.tracks.size(); ++t) {
      // Events are sorted by start, and the lanes keep their running max end: the span without a scan.
      if (!rank.tracks[t].events.empty()) lo = std::min(lo, rank.tracks[t].events.front().ts_ns);
      for (const LaneIndex& l : view.tracks[t].lanes)
        if (l.size() > 0) hi = std::max(hi, l.max_end.back());
      events_ += rank.tracks[t].events.size();
    }
    rows_.push_back({RowKind::RankHeader, r, -1, 0, y, options_.header_height,
                     "rank " + std::to_string(rank.rank) + (rank.truncated ? " (truncated)" : "")});
    y += options_.header_height;
    // Host threads first (where work is issued), then streams (where it runs), then communication.
    for (model::TrackKind kind :
         {model::TrackKind::HostThread, model::TrackKind::DeviceStream, model::TrackKind::Communication})
      for (size_t t = 0; t < rank.tracks.size(); ++t) {
        if (rank.tracks[t].kind != kind || rank.tracks[t].events.empty()) continue;
        uint16_t lanes = uint16_t(std::max<size_t>(1, view.tracks[t].lanes.size()));
        int h = lanes * options_.lane_height;
        rows_.push_back({RowKind::Track, r, int32_t(t), lanes, y, h, track_label(rank.tracks[t]), view.folded[t].first,
                         view.folded[t].second, view.sync_lane[t] != 0});
        y += h + options_.gap;
      }
    // Derived rows (FSDP units) after the tracks their events are on, before what was measured.
    for (size_t d = 0; d < view.derived.size(); ++d) {
      const DerivedRow& dr = view.derived[d];
      uint16_t lanes = uint16_t(std::max<size_t>(1, dr.index.lanes.size()));
      int h = lanes * options_.lane_height;
      rows_.push_back({RowKind::Derived, r, int32_t(d), lanes, y, h, dr.label, dr.folded, dr.folded_lanes});
      y += h + options_.gap;
    }
    for (size_t c = 0; c < rank.counters.size(); ++c) {
      rows_.push_back({RowKind::Counter, r, int32_t(c), 1, y, options_.counter_height, rank.counters[c].name});
      y += options_.counter_height + options_.gap;
    }
  }
  height_ = y;
  if (lo <= hi) start_ns_ = lo, end_ns_ = hi;
}

size_t TimelineLayout::bytes() const {
  size_t b = rows_.capacity() * sizeof(Row) + ranks_.capacity() * sizeof(RankView);
  for (const RankView& r : ranks_) b += r.bytes() - sizeof(RankView);
  for (const Row& row : rows_) b += row.label.capacity();
  return b;
}

int TimelineLayout::row_at(int y, int* lane) const {
  auto it = std::upper_bound(rows_.begin(), rows_.end(), y, [](int v, const Row& r) { return v < r.y; });
  if (it == rows_.begin()) return -1;
  const Row& row = *--it;
  if (y >= row.y + row.height) return -1;
  if (lane) *lane = has_lanes(row.kind) ? (y - row.y) / options_.lane_height : 0;
  return int(it - rows_.begin());
}

int TimelineLayout::row_of_track(uint32_t rank, uint32_t track) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].kind == RowKind::Track && rows_[i].rank == rank && rows_[i].item == int32_t(track)) return int(i);
  return -1;
}

const TrackIndex& TimelineLayout::lanes_of(const Row& row) const {
  const RankView& rv = ranks_[row.rank];
  return row.kind == RowKind::Derived ? rv.derived[size_t(row.item)].index : rv.tracks[size_t(row.item)];
}

void TimelineLayout::row_marks(const Row& row, const Viewport& vp, std::vector<Mark>& out) const {
  const RankView& rv = ranks_[row.rank];
  const LodOptions lod{.host_colours = &rv.host_colours};
  if (row.kind == RowKind::Derived) {
    const DerivedRow& d = rv.derived[size_t(row.item)];
    track_marks(d.events(*rv.rank), d.index, vp, out, lod);
  } else {
    track_marks(rv.rank->tracks[size_t(row.item)], rv.tracks[size_t(row.item)], vp, out, lod);
  }
}

std::optional<model::EventRef> TimelineLayout::row_hit(const Row& row, uint16_t lane, double ns,
                                                       double slack_ns) const {
  const TrackIndex& ti = lanes_of(row);
  if (!has_lanes(row.kind) || lane >= ti.lanes.size()) return std::nullopt;
  const RankView& rv = ranks_[row.rank];
  if (row.kind == RowKind::Derived) {
    const DerivedRow& d = rv.derived[size_t(row.item)];
    if (auto p = hit_test(d.events(*rv.rank), ti.lanes[lane], ns, slack_ns)) return d.event(*p);
    return std::nullopt;
  }
  if (auto i = hit_test(rv.rank->tracks[size_t(row.item)], ti.lanes[lane], ns, slack_ns))
    return model::EventRef{uint32_t(row.item), *i};
  return std::nullopt;
}

model::EventRef TimelineLayout::row_event(const Row& row, uint32_t position) const {
  if (row.kind == RowKind::Derived) return ranks_[row.rank].derived[size_t(row.item)].event(position);
  return {uint32_t(row.item), position};
}

}  // namespace shardscope::viewer
