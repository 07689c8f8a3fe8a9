// Search by name. The text is matched once per distinct name in each rank's string table (thousands of
// names, not millions of events); events are then picked by their name id against that set, so a search
// over ten million events is one pass of integer compares.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "model/index.h"
#include "viewer/model/timeline_layout.h"

namespace shardscope::viewer {

struct SearchHit {
  int64_t ts_ns = 0;
  uint32_t rank = 0;  // layout rank
  model::EventRef event;
};

struct SearchResult {
  std::vector<SearchHit> hits;  // by start time, then rank
  int64_t max_dur_ns = 0;       // the longest hit: how far before a window a visible hit can start
};

// Events whose name contains `text`, ignoring ASCII case. Empty text finds nothing.
SearchResult search_names(const TimelineLayout& layout, std::string_view text);

// The hit after (forward) or before `current`, wrapping around; the first (last) when there is no current.
size_t step_hit(const SearchResult& r, std::optional<size_t> current, bool forward);

// The hits that can overlap [lo, hi): a range of indices into hits (each still to be clipped).
std::pair<size_t, size_t> hits_near(const SearchResult& r, double lo, double hi);

}  // namespace shardscope::viewer
