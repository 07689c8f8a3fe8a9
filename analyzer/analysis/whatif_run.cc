#include "analyzer/analysis/whatif_run.h"

#include <atomic>
#include <map>
#include <mutex>

#include "analyzer/metrics/replay_graph.h"

namespace shardscope::analysis {

WhatIfRun what_if_stream(const std::vector<std::string>& paths, const plugins::LoadOptions& options,
                         const metrics::WhatIfChange& change, const OnRankGraph& on_graph) {
  std::mutex mu;
  std::map<uint64_t, metrics::replay::RankGraph> graphs;  // by the file's place: join orders by rank, then it
  std::atomic<size_t> in_hand = 0;
  const std::vector<std::filesystem::path> in(paths.begin(), paths.end());
  plugins::LoadResult loaded = plugins::load_each(in, options, [&](plugins::LoadedRank& r) {
    // The loader drops the rank's events when this returns.
    const size_t now = ++in_hand;
    metrics::replay::RankGraph g = metrics::replay::build_rank_graph(r.rank);
    if (on_graph) on_graph(now);
    {
      std::lock_guard lock(mu);
      graphs.emplace(r.order, std::move(g));
    }
    --in_hand;
  });
  WhatIfRun out;
  out.warnings = std::move(loaded.warnings);
  out.ranks = graphs.size();
  std::vector<metrics::replay::RankGraph> ranks;
  ranks.reserve(graphs.size());
  for (auto& [order, g] : graphs) ranks.push_back(std::move(g));
  graphs.clear();
  out.whatif = metrics::what_if(metrics::replay::join(std::move(ranks)), change);
  return out;
}

}  // namespace shardscope::analysis
