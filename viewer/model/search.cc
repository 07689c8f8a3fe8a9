#include "viewer/model/search.h"

#include <algorithm>
#include <cctype>

namespace shardscope::viewer {

namespace {

bool contains_nocase(std::string_view hay, std::string_view needle) {
  auto eq = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  };
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), eq) != hay.end();
}

}  // namespace

SearchResult search_names(const TimelineLayout& layout, std::string_view text) {
  SearchResult out;
  if (text.empty()) return out;
  std::vector<size_t> runs;  // where each track's hits begin in out.hits
  for (uint32_t r = 0; r < layout.ranks().size(); ++r) {
    const model::Rank& rank = *layout.ranks()[r].rank;
    std::vector<bool> match(rank.strings.size());
    bool any = false;
    for (model::StringId id = 0; id < rank.strings.size(); ++id)
      if (contains_nocase(rank.strings.str(id), text)) match[id] = any = true;
    if (!any) continue;
    for (uint32_t t = 0; t < rank.tracks.size(); ++t) {
      const std::vector<model::Event>& events = rank.tracks[t].events;
      size_t begin = out.hits.size();
      for (uint32_t i = 0; i < events.size(); ++i)
        if (events[i].name < match.size() && match[events[i].name]) {
          out.hits.push_back({events[i].ts_ns, r, {t, i}});
          out.max_dur_ns = std::max(out.max_dur_ns, events[i].dur_ns);
        }
      if (out.hits.size() > begin) runs.push_back(begin);
    }
  }
  // A track's events are in start order, so its hits are one sorted run: merge the runs pairwise (log of
  // the track count passes) rather than sort millions of hits.
  auto less = [](const SearchHit& a, const SearchHit& b) {
    return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.rank < b.rank;
  };
  runs.push_back(out.hits.size());
  while (runs.size() > 2) {
    std::vector<size_t> merged;
    for (size_t k = 0; k + 1 < runs.size(); k += 2) {
      merged.push_back(runs[k]);
      if (k + 2 < runs.size())
        std::inplace_merge(out.hits.begin() + ptrdiff_t(runs[k]), out.hits.begin() + ptrdiff_t(runs[k + 1]),
                           out.hits.begin() + ptrdiff_t(runs[k + 2]), less);
    }
    merged.push_back(out.hits.size());
    runs = std::move(merged);
  }
  return out;
}

size_t step_hit(const SearchResult& r, std::optional<size_t> current, bool forward) {
  size_t n = r.hits.size();
  if (n == 0) return 0;
  if (!current || *current >= n) return forward ? 0 : n - 1;
  return forward ? (*current + 1) % n : (*current + n - 1) % n;
}

std::pair<size_t, size_t> hits_near(const SearchResult& r, double lo, double hi) {
  auto by_ts = [](const SearchHit& h, double t) { return double(h.ts_ns) < t; };
  auto first = std::lower_bound(r.hits.begin(), r.hits.end(), lo - double(r.max_dur_ns), by_ts);
  auto last = std::lower_bound(first, r.hits.end(), hi, by_ts);
  return {size_t(first - r.hits.begin()), size_t(last - r.hits.begin())};
}

}  // namespace shardscope::viewer
