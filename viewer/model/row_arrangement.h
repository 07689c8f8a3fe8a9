// The timeline's rows as the user arranges them, apart from any widget: per rank its track groups (CPU
// threads, CUDA API threads, NVTX ranges, GPU streams, communication, FSDP units, counters), each collapsible to one
// summary lane; rows pinned to the top, reordered within their group, hidden, or filtered by name. It reads
// the layout's rows (every track, default order) and lays out the rows to draw, with their y: pinned rows
// first from y = 0 (they do not scroll), then the rest from pinned_height(). The state saves to a small JSON
// text (the window keeps it per run directory) keyed by rank number and row label, not by index, so it
// survives a reload.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "viewer/model/timeline_layout.h"

namespace shardscope::viewer {

// RowGroup, in the order a rank shows its groups, is in derived_rows.h (derived rows name their group).
std::string_view to_string(RowGroup g);  // "CPU threads", "CUDA API threads", ...
// By kind, and for host threads by the name the GPU tracer gives them ("CUDA API thread N", "NVTX thread N").
RowGroup group_of(const model::Track& track);

class RowArrangement {
 public:
  RowArrangement() = default;
  // `layout` must outlive the arrangement. Defaults: on a rank with GPU streams its CPU and CUDA API threads
  // are folded (the device side is what one reads first); everything else, and host-only ranks, open.
  explicit RowArrangement(const TimelineLayout& layout);

  const std::vector<Row>& rows() const { return rows_; }
  size_t pinned_count() const { return pinned_count_; }
  int pinned_height() const { return pinned_height_; }
  int height() const { return height_; }
  // The row at arranged y (rows start at 0), or -1; `lane` gets the lane under y for a track row.
  int row_at(int y, int* lane = nullptr) const;
  // The row that shows track `track` of layout rank `rank`, or -1 (folded, hidden or filtered out).
  int row_of_track(uint32_t rank, uint32_t track) const;
  // The row that shows track `track` of rank `rank`: its own, else the folded group's or rank's row whose
  // summary lane draws it (where a flow to one of its events starts); -1 when hidden or filtered out.
  int row_showing_track(uint32_t rank, uint32_t track) const;
  // The layout rows (indices into layout.rows()) a group or rank header row stands for: what its summary
  // lane draws. Hidden members included: hiding a row does not make its rank look idle.
  std::vector<uint32_t> members(const Row& row) const;
  // How many of a group's (or all, for the rank header) rows are hidden.
  size_t hidden_count() const { return hidden_.size(); }

  // The stable key of an arranged row ("0/GPU 0 stream 7", "0/group/GPU streams", "0"): what the state
  // and the tests name rows by.
  std::string key(const Row& row) const;
  int find(std::string_view key) const;  // the arranged row with that key, or -1

  bool collapsed(const Row& row) const;  // a rank header or group row
  void set_collapsed(const Row& row, bool collapsed);
  void toggle(const Row& row) { set_collapsed(row, !collapsed(row)); }
  bool pinned(const Row& row) const;
  void set_pinned(const Row& row, bool pinned);
  void hide(const Row& row);
  void show_hidden();
  // Moves row `from` to where row `to` is (before it when moving up, after it when moving down): within one
  // group, or among the pinned rows; false (nothing moves) otherwise.
  bool move(int from, int to);
  // Case-insensitive substring of the row label; while set, matching rows show even in folded groups and
  // folded ranks, and groups without a match drop out.
  void set_filter(std::string filter);
  const std::string& filter() const { return filter_; }
  // Makes track `track` of rank `rank` visible (unfolds its rank and group, unhides it): a jump to an event.
  void reveal(uint32_t rank, uint32_t track);
  void reset();  // the defaults

  int label_width = 0;  // the widget's label column, persisted with the rest (0: its default)

  // {"version":1,"collapsed":{key:bool},"pinned":[key],"hidden":[key],"order":{group key:[key]},
  // "label_width":N}; restore() ignores keys this run lacks and returns false on text that is not this.
  std::string save() const;
  bool restore(std::string_view text);

 private:
  struct Group {
    uint32_t rank = 0;
    RowGroup group{};
    std::vector<uint32_t> members;  // layout rows, in the user's order
  };
  void arrange();
  std::string row_key(uint32_t layout_row) const;
  std::string group_key(const Group& g) const;
  std::string rank_key(uint32_t rank) const;
  bool default_collapsed(const std::string& key) const;
  bool is_collapsed(const std::string& key) const;
  bool matches(const Row& row) const;

  const TimelineLayout* layout_ = nullptr;
  std::vector<Group> groups_;              // per rank, in RowGroup order
  std::vector<uint32_t> source_;           // per arranged row: its layout row (track/counter), else -1
  std::vector<int32_t> group_of_row_;      // per arranged row: its group index (group rows), else -1
  std::set<std::string> default_folded_;   // group keys folded by default
  std::map<std::string, bool> collapsed_;  // the user's choices, over the defaults
  std::vector<std::string> pinned_;        // in pin order
  std::set<std::string> hidden_;
  std::string filter_;
  std::vector<Row> rows_;
  size_t pinned_count_ = 0;
  int pinned_height_ = 0, height_ = 0;
};

}  // namespace shardscope::viewer
