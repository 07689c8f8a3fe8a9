#include "analyzer/analysis/reduce.h"

#include <algorithm>
#include <map>

namespace shardscope::analysis {

namespace {

// The run's ranks with device work and no communication recognised, where the run is distributed.
std::optional<report::UnrecognisedComm> unrecognised_comm(
    const std::vector<std::pair<metrics::RankKey, report::RankReport>>& ranks,
    const std::map<metrics::RankKey, int>& world) {
  report::UnrecognisedComm u;
  for (const auto& [key, rr] : ranks) {
    if (!rr.collectives.empty()) continue;
    auto w = world.find(key);
    const int world_size = w != world.end() ? w->second : 0;
    if (world_size <= 1 && ranks.size() <= 1) continue;
    std::vector<report::KernelTime> longest;
    for (const report::KernelTime& k : rr.top_device)
      if (longest.size() < 3 && (k.cls == model::IntervalClass::Compute || k.cls == model::IntervalClass::Other))
        longest.push_back(k);
    if (longest.empty()) continue;  // no device work to name: nothing was missed
    u.ranks.push_back(rr.rank);
    u.world_size = std::max(u.world_size, world_size);
    if (u.longest.empty()) u.longest = std::move(longest);
  }
  if (u.ranks.empty()) return std::nullopt;
  return u;
}

}  // namespace

void RunReducer::add(RankSummary&& s) {
  world_[s.key()] = s.header.world_size;
  table_.add(s.arrivals);
  ranks_.emplace_back(s.key(), std::move(s.report));
}

void RunReducer::merge(RunReducer&& other) {
  table_.merge(other.table_);
  world_.merge(other.world_);
  for (auto& r : other.ranks_) ranks_.push_back(std::move(r));
}

RunReducer RunReducer::from_parts(metrics::InstanceTable table,
                                  std::vector<std::pair<metrics::RankKey, report::RankReport>> ranks,
                                  std::map<metrics::RankKey, int> world) {
  RunReducer r;
  r.world_ = std::move(world);
  r.table_ = std::move(table);
  r.ranks_ = std::move(ranks);
  return r;
}

report::Report RunReducer::finish(std::vector<std::string> inputs, std::vector<std::string> warnings, Scope scope) && {
  report::Report r;
  r.inputs = std::move(inputs);
  r.warnings = std::move(warnings);
  std::sort(ranks_.begin(), ranks_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (scope == Scope::Everything) r.unrecognised_comm = unrecognised_comm(ranks_, world_);
  std::map<size_t, std::vector<int>> step_counts;
  for (auto& [key, rr] : ranks_) {
    table_.name_late_peers(rr.prefetch, key);
    for (metrics::CollectiveStats& c : rr.collectives) c.link_ns = table_.fastest_time(c.kind, uint64_t(c.count));
    r.prefetch_verdict = metrics::combine(r.prefetch_verdict, rr.prefetch.verdict);
    step_counts[rr.trace_steps].push_back(rr.rank);
    r.ranks.push_back(std::move(rr));
  }
  ranks_.clear();
  if (step_counts.size() > 1) r.step_counts = step_counts;
  if (scope == Scope::Everything) r.stragglers = table_.stragglers(), r.links = table_.links();
  return r;
}

}  // namespace shardscope::analysis
