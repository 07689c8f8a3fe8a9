#include "viewer/model/row_arrangement.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

namespace shardscope::viewer {

std::string_view to_string(RowGroup g) {
  switch (g) {
    case RowGroup::CpuThreads: return "CPU threads";
    case RowGroup::CudaApi: return "CUDA API threads";
    case RowGroup::UserRanges: return "NVTX ranges";
    case RowGroup::GpuStreams: return "GPU streams";
    case RowGroup::Communication: return "communication";
    case RowGroup::FsdpUnits: return "FSDP units";
    case RowGroup::Counters: return "counters";
  }
  return "rows";
}

RowGroup group_of(const model::Track& track) {
  switch (track.kind) {
    case model::TrackKind::DeviceStream: return RowGroup::GpuStreams;
    case model::TrackKind::Communication: return RowGroup::Communication;
    case model::TrackKind::HostThread: break;
  }
  // The trainer's own collective ranges ("comm: all-gather") are a host thread where the trace has a GPU
  // (the kernels are on the NCCL stream); they are still what one looks for under communication.
  if (track.name.starts_with("comm: ")) return RowGroup::Communication;
  if (track.name.starts_with("CUDA API")) return RowGroup::CudaApi;
  if (track.name.starts_with("NVTX")) return RowGroup::UserRanges;
  return RowGroup::CpuThreads;
}

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

RowArrangement::RowArrangement(const TimelineLayout& layout) : layout_(&layout) {
  const std::vector<Row>& rows = layout.rows();
  for (uint32_t r = 0; r < layout.ranks().size(); ++r) {
    size_t first = groups_.size();
    for (int g = 0; g < kRowGroups; ++g) groups_.push_back({r, RowGroup(g), {}});
    bool has_streams = false;
    for (uint32_t i = 0; i < rows.size(); ++i) {
      if (rows[i].rank != r || !is_leaf(rows[i].kind)) continue;
      RowGroup g = rows[i].kind == RowKind::Counter   ? RowGroup::Counters
                   : rows[i].kind == RowKind::Derived ? layout.ranks()[r].derived[size_t(rows[i].item)].group
                                                      : group_of(layout.ranks()[r].rank->tracks[size_t(rows[i].item)]);
      has_streams |= g == RowGroup::GpuStreams;
      groups_[first + size_t(g)].members.push_back(i);
    }
    // Folded host side only where there is a device side to read instead.
    if (has_streams)
      for (RowGroup g : {RowGroup::CpuThreads, RowGroup::CudaApi})
        default_folded_.insert(group_key(groups_[first + size_t(g)]));
  }
  std::erase_if(groups_, [](const Group& g) { return g.members.empty(); });
  arrange();
}

std::string RowArrangement::rank_key(uint32_t rank) const { return std::to_string(layout_->ranks()[rank].rank->rank); }

std::string RowArrangement::row_key(uint32_t layout_row) const {
  const Row& row = layout_->rows()[layout_row];
  if (row.kind == RowKind::Derived)  // apart from the tracks: a thread could be called "unit 1"
    return rank_key(row.rank) + "/" +
           std::string(to_string(layout_->ranks()[row.rank].derived[size_t(row.item)].group)) + "/" + row.label;
  return rank_key(row.rank) + (row.kind == RowKind::Counter ? "/counter/" : "/") + row.label;
}

std::string RowArrangement::group_key(const Group& g) const {
  return rank_key(g.rank) + "/group/" + std::string(to_string(g.group));
}

std::string RowArrangement::key(const Row& row) const {
  auto i = size_t(&row - rows_.data());
  if (i >= rows_.size()) return {};
  if (row.kind == RowKind::RankHeader) return rank_key(row.rank);
  if (row.kind == RowKind::Group) return group_key(groups_[size_t(group_of_row_[i])]);
  return row_key(source_[i]);
}

int RowArrangement::find(std::string_view k) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (key(rows_[i]) == k) return int(i);
  return -1;
}

bool RowArrangement::default_collapsed(const std::string& k) const { return default_folded_.count(k) > 0; }

bool RowArrangement::is_collapsed(const std::string& k) const {
  auto it = collapsed_.find(k);
  return it != collapsed_.end() ? it->second : default_collapsed(k);
}

bool RowArrangement::collapsed(const Row& row) const {
  return (row.kind == RowKind::RankHeader || row.kind == RowKind::Group) && is_collapsed(key(row));
}

void RowArrangement::set_collapsed(const Row& row, bool c) {
  if (row.kind != RowKind::RankHeader && row.kind != RowKind::Group) return;
  std::string k = key(row);
  if (c == default_collapsed(k)) collapsed_.erase(k);
  else
    collapsed_[k] = c;
  arrange();
}

bool RowArrangement::pinned(const Row& row) const {
  return std::find(pinned_.begin(), pinned_.end(), key(row)) != pinned_.end();
}

void RowArrangement::set_pinned(const Row& row, bool p) {
  if (!is_leaf(row.kind)) return;
  std::string k = key(row);
  std::erase(pinned_, k);
  if (p) pinned_.push_back(k);
  arrange();
}

void RowArrangement::hide(const Row& row) {
  if (!is_leaf(row.kind)) return;
  std::string k = key(row);
  std::erase(pinned_, k);
  hidden_.insert(k);
  arrange();
}

void RowArrangement::show_hidden() {
  hidden_.clear();
  arrange();
}

bool RowArrangement::move(int from, int to) {
  if (from < 0 || to < 0 || size_t(from) >= rows_.size() || size_t(to) >= rows_.size() || from == to) return false;
  if (source_[size_t(from)] == uint32_t(-1) || source_[size_t(to)] == uint32_t(-1)) return false;
  const bool from_pinned = size_t(from) < pinned_count_, to_pinned = size_t(to) < pinned_count_;
  if (from_pinned != to_pinned) return false;
  if (from_pinned) {
    std::string k = pinned_[size_t(from)];
    pinned_.erase(pinned_.begin() + from);
    pinned_.insert(pinned_.begin() + to, k);  // `to` is where it lands: before it moving up, after it moving down
    arrange();
    return true;
  }
  const uint32_t a = source_[size_t(from)], b = source_[size_t(to)];
  for (Group& g : groups_) {
    auto ia = std::find(g.members.begin(), g.members.end(), a), ib = std::find(g.members.begin(), g.members.end(), b);
    if (ia == g.members.end()) continue;
    if (ib == g.members.end()) return false;  // another group: a CPU thread among the streams would mislead
    // Erasing first and inserting at b's old place lands a before b moving up and after it moving down.
    auto pb = ib - g.members.begin();
    g.members.erase(ia);
    g.members.insert(g.members.begin() + pb, a);
    arrange();
    return true;
  }
  return false;
}

void RowArrangement::set_filter(std::string filter) {
  filter_ = lower(filter);
  arrange();
}

bool RowArrangement::matches(const Row& row) const {
  return filter_.empty() || lower(row.label).find(filter_) != std::string::npos;
}

void RowArrangement::reveal(uint32_t rank, uint32_t track) {
  for (const Group& g : groups_) {
    if (g.rank != rank) continue;
    for (uint32_t m : g.members) {
      const Row& row = layout_->rows()[m];
      if (row.kind != RowKind::Track || row.item != int32_t(track)) continue;
      hidden_.erase(row_key(m));
      for (const std::string& k : {rank_key(rank), group_key(g)})
        if (is_collapsed(k)) {
          if (default_collapsed(k)) collapsed_[k] = false;
          else
            collapsed_.erase(k);
        }
      if (!matches(row)) filter_.clear();
      arrange();
      return;
    }
  }
}

void RowArrangement::reset() {
  collapsed_.clear();
  pinned_.clear();
  hidden_.clear();
  filter_.clear();
  label_width = 0;
  for (Group& g : groups_) std::sort(g.members.begin(), g.members.end());
  arrange();
}

void RowArrangement::arrange() {
  rows_.clear();
  source_.clear();
  group_of_row_.clear();
  const LayoutOptions& o = layout_->options();
  const std::vector<Row>& base = layout_->rows();
  int y = 0;
  auto add = [&](Row row, uint32_t source, int32_t group) {
    row.y = y;
    y += row.height + (is_leaf(row.kind) ? o.gap : 0);
    rows_.push_back(std::move(row));
    source_.push_back(source);
    group_of_row_.push_back(group);
  };
  // Pinned rows first, labelled with their rank: they sit away from its header.
  for (const std::string& k : pinned_)
    for (uint32_t i = 0; i < base.size(); ++i)
      if (is_leaf(base[i].kind) && row_key(i) == k) {
        Row row = base[i];
        row.label = "r" + rank_key(row.rank) + " · " + row.label;
        add(std::move(row), i, -1);
      }
  pinned_count_ = rows_.size();
  pinned_height_ = y;
  for (uint32_t r = 0; r < layout_->ranks().size(); ++r) {
    for (const Row& h : base)
      if (h.kind == RowKind::RankHeader && h.rank == r) add(h, uint32_t(-1), -1);
    // A filter looks inside folded ranks as inside folded groups.
    if (filter_.empty() && is_collapsed(rank_key(r))) continue;
    for (size_t gi = 0; gi < groups_.size(); ++gi) {
      const Group& g = groups_[gi];
      if (g.rank != r) continue;
      std::vector<uint32_t> shown;
      size_t hidden = 0;
      for (uint32_t m : g.members) {
        std::string k = row_key(m);
        if (hidden_.count(k)) ++hidden;
        else if (std::find(pinned_.begin(), pinned_.end(), k) == pinned_.end() && matches(base[m]))
          shown.push_back(m);
      }
      if (!filter_.empty() && shown.empty()) continue;
      Row header{RowKind::Group,
                 r,
                 int32_t(g.group),
                 1,
                 0,
                 o.header_height,
                 std::string(to_string(g.group)) + " (" + std::to_string(g.members.size()) + ")"};
      if (hidden) header.label += ", " + std::to_string(hidden) + " hidden";
      add(std::move(header), uint32_t(-1), int32_t(gi));
      if (filter_.empty() && is_collapsed(group_key(g))) continue;
      for (uint32_t m : shown) add(base[m], m, -1);
    }
  }
  height_ = y;
}

int RowArrangement::row_at(int y, int* lane) const {
  auto it = std::upper_bound(rows_.begin(), rows_.end(), y, [](int v, const Row& r) { return v < r.y; });
  if (it == rows_.begin()) return -1;
  const Row& row = *--it;
  if (y >= row.y + row.height) return -1;
  if (lane) *lane = has_lanes(row.kind) ? (y - row.y) / layout_->options().lane_height : 0;
  return int(it - rows_.begin());
}

int RowArrangement::row_of_track(uint32_t rank, uint32_t track) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].kind == RowKind::Track && rows_[i].rank == rank && rows_[i].item == int32_t(track)) return int(i);
  return -1;
}

int RowArrangement::row_showing_track(uint32_t rank, uint32_t track) const {
  if (int own = row_of_track(rank, track); own >= 0) return own;
  const std::vector<Row>& base = layout_->rows();
  uint32_t source = 0;
  while (source < base.size() &&
         !(base[source].kind == RowKind::Track && base[source].rank == rank && base[source].item == int32_t(track)))
    ++source;
  if (source == base.size() || hidden_.count(row_key(source))) return -1;
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row& row = rows_[i];
    if (row.rank != rank || !collapsed(row)) continue;
    if (row.kind == RowKind::RankHeader) return int(i);  // the whole rank folded: its header's lane
    const std::vector<uint32_t>& m = groups_[size_t(group_of_row_[i])].members;
    if (std::find(m.begin(), m.end(), source) != m.end()) return int(i);
  }
  return -1;
}

std::vector<uint32_t> RowArrangement::members(const Row& row) const {
  std::vector<uint32_t> out;
  auto i = size_t(&row - rows_.data());
  if (i >= rows_.size()) return out;
  if (row.kind == RowKind::Group) return groups_[size_t(group_of_row_[i])].members;
  if (row.kind == RowKind::RankHeader)
    for (const Group& g : groups_)
      if (g.rank == row.rank) out.insert(out.end(), g.members.begin(), g.members.end());
  return out;
}

std::string RowArrangement::save() const {
  nlohmann::json j = {{"version", 1}};
  j["collapsed"] = nlohmann::json::object();
  for (const auto& [k, c] : collapsed_) j["collapsed"][k] = c;
  j["pinned"] = pinned_;
  j["hidden"] = hidden_;
  j["order"] = nlohmann::json::object();
  for (const Group& g : groups_)
    if (!std::is_sorted(g.members.begin(), g.members.end())) {
      std::vector<std::string> keys;
      for (uint32_t m : g.members) keys.push_back(row_key(m));
      j["order"][group_key(g)] = keys;
    }
  j["label_width"] = label_width;
  return j.dump();
}

bool RowArrangement::restore(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("version") || j["version"] != 1) return false;
  try {
    collapsed_.clear();
    const nlohmann::json folds = j.value("collapsed", nlohmann::json::object());
    for (const auto& [k, c] : folds.items()) collapsed_[k] = c.get<bool>();
    pinned_ = j.value("pinned", std::vector<std::string>{});
    hidden_ = j.value("hidden", std::set<std::string>{});
    label_width = j.value("label_width", 0);
    const nlohmann::json order = j.value("order", nlohmann::json::object());
    for (Group& g : groups_) {
      std::sort(g.members.begin(), g.members.end());
      auto it = order.find(group_key(g));
      if (it == order.end()) continue;
      std::vector<std::string> keys = it->get<std::vector<std::string>>();
      // Rows the saved order names come in its order; rows it does not (a new thread) keep theirs, after.
      auto rank_of = [&](uint32_t m) {
        auto p = std::find(keys.begin(), keys.end(), row_key(m));
        return p == keys.end() ? keys.size() : size_t(p - keys.begin());
      };
      std::stable_sort(g.members.begin(), g.members.end(),
                       [&](uint32_t a, uint32_t b) { return rank_of(a) < rank_of(b); });
    }
  } catch (const nlohmann::json::exception&) {
    reset();
    return false;
  }
  arrange();
  return true;
}

}  // namespace shardscope::viewer
