#include "viewer/model/area_slices.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include "model/saturating.h"

namespace shardscope::viewer {

std::vector<SliceGroup> area_slices(const TimelineLayout& layout, std::vector<TrackRef> tracks, int64_t lo,
                                    int64_t hi) {
  std::sort(tracks.begin(), tracks.end());
  tracks.erase(std::unique(tracks.begin(), tracks.end()), tracks.end());
  std::vector<SliceGroup> groups;
  std::unordered_map<std::string_view, size_t> by_name;  // views into the ranks' string tables
  if (hi < lo) return groups;
  for (const TrackRef& ref : tracks) {
    if (ref.rank >= layout.ranks().size()) continue;
    const model::Rank& rank = *layout.ranks()[ref.rank].rank;
    if (ref.track >= rank.tracks.size()) continue;
    for (const model::Event& e : rank.tracks[ref.track].events) {
      if (e.ph != 'X' || e.dur_ns < 0) continue;
      const bool in = e.dur_ns == 0 ? (e.ts_ns >= lo && e.ts_ns < hi) : (e.ts_ns < hi && e.end_ns() > lo);
      if (!in) continue;
      std::string_view name = rank.str(e.name);
      auto [it, added] = by_name.try_emplace(name, groups.size());
      if (added) groups.push_back({std::string(name)});
      SliceGroup& g = groups[it->second];
      ++g.count;
      g.total_ns = model::sat_add(g.total_ns, e.dur_ns);
      g.max_ns = std::max(g.max_ns, e.dur_ns);
    }
  }
  std::sort(groups.begin(), groups.end(), [](const SliceGroup& a, const SliceGroup& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return groups;
}

std::string area_tsv(const std::vector<SliceGroup>& groups) {
  std::string out = "name\tcount\ttotal_ns\tmean_ns\tmax_ns\n";
  for (const SliceGroup& g : groups) {
    std::string name = g.name;
    std::replace_if(
        name.begin(), name.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
    out += name + '\t' + std::to_string(g.count) + '\t' + std::to_string(g.total_ns) + '\t' +
           std::to_string(std::llround(g.mean_ns())) + '\t' + std::to_string(g.max_ns) + '\n';
  }
  return out;
}

namespace {

// "120ms" → 120'000'000 ns; nullopt (with why) for anything else, so a typo is refused, not read as zero.
std::optional<int64_t> parse_time(const std::string& text, std::string* why) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(v) || *begin == '+' || *begin == '-' ||
      std::isspace(static_cast<unsigned char>(*begin))) {
    *why = "'" + text + "' is not a time (a number and ns, us, ms or s, e.g. 120ms)";
    return std::nullopt;
  }
  static const std::pair<const char*, double> units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  for (const auto& [unit, scale] : units)
    if (std::string(end) == unit) {
      const double ns = v * scale;
      if (ns < 9.2e18) return int64_t(std::llround(ns));
      *why = "'" + text + "' is past what a run can last";
      return std::nullopt;
    }
  *why = "'" + text + "' needs a unit: ns, us, ms or s (e.g. 120ms)";
  return std::nullopt;
}

// "step:N": N a whole number (steps may be numbered from any start, never negative).
std::optional<AreaSpan> parse_step(const std::string& text, std::string* why) {
  const std::string n = text.substr(5);
  if (n.empty() || n.size() > 18 || n.find_first_not_of("0123456789") != std::string::npos) {
    *why = "a step is step:N with N its number, e.g. step:3";
    return std::nullopt;
  }
  AreaSpan span;
  span.step = std::stoll(n);
  return span;
}

}  // namespace

std::optional<AreaSpan> parse_area_span(const std::string& text, std::string* error) {
  std::string why;
  const size_t colon = text.find(':');
  if (text.rfind("step:", 0) == 0) {
    if (auto span = parse_step(text, &why)) return span;
  } else if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos) {
    why = "wants START:END relative to the run's start, e.g. 120ms:180ms";
  } else if (auto lo = parse_time(text.substr(0, colon), &why)) {
    if (auto hi = parse_time(text.substr(colon + 1), &why)) {
      if (*hi > *lo) return AreaSpan{*lo, *hi};
      why = "the end must come after the start";
    }
  }
  if (error) *error = "--area '" + text.substr(0, 80) + "': " + why;
  return std::nullopt;
}

std::optional<std::pair<int64_t, int64_t>> step_window(const TimelineLayout& layout, int64_t number) {
  std::optional<std::pair<int64_t, int64_t>> out;
  for (const auto& r : layout.ranks())
    for (const model::Step& s : r.rank->steps)
      if (s.number == number) {
        if (!out) out = std::pair{s.start_ns, s.end_ns};
        out->first = std::min(out->first, s.start_ns);
        out->second = std::max(out->second, s.end_ns);
      }
  return out;
}

}  // namespace shardscope::viewer
