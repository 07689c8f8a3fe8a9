// A/B comparison of two analysed runs, rank by rank: the report's headline metrics side by side and the
// device activities whose total time changed most. Data only; report/diff_render.h makes the text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/analysis/na.h"
#include "analyzer/analysis/run.h"

namespace shardscope::analysis {

struct DiffRow {
  std::string metric;  // its label, also the JSON's "metric"
  std::optional<double> a, b;
  Na na_a = Na::None, na_b = Na::None;  // why a side is missing, unless the collective's code below says it
  // A collective's row: why a side's figure is missing, as the collectives table's code.
  metrics::CollectiveNa coll_na_a = metrics::CollectiveNa::None, coll_na_b = metrics::CollectiveNa::None;
  model::CollectiveKind kind = model::CollectiveKind::None;  // the collective a row is about
};

struct DeviceChange {
  std::string name;            // the device activity (kernel) name
  int64_t a_ns = 0, b_ns = 0;  // its total time in each run
};

struct RankDiff {
  size_t index_a = 0, index_b = 0;  // into each run's report.ranks / trace.ranks
  int rank_a = 0, rank_b = 0;
  std::vector<DiffRow> rows;
  std::vector<DeviceChange> largest_changes;  // at most kLargestChanges, the largest |B - A| first
};

inline constexpr size_t kLargestChanges = 10;

struct RunDiff {
  std::vector<RankDiff> ranks;  // empty: the runs have no rank in common
};

// Ranks are paired by number; two single-rank runs are paired whatever their numbers.
RunDiff diff_runs(const AnalysedRun& a, const AnalysedRun& b);

}  // namespace shardscope::analysis
