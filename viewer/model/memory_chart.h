// The memory dock's chart: per rank, per category, the measured peak beside the ZeRO prediction, taken
// from the report's comparison (metrics::compare_memory, the rows `shardscope report` prints), not
// computed again. Bars share one scale: the largest value of the rows that have both sides, so a category
// the model does not predict (allocator_total, far larger) does not squash the comparison.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/analysis/report.h"

namespace shardscope::viewer {

struct MemoryBar {
  std::string category;
  std::optional<double> measured, predicted;  // bytes
  std::optional<double> departure;            // (measured − predicted) / predicted, with both sides
};

struct MemoryRankChart {
  int rank = 0;
  std::vector<MemoryBar> bars;
  const metrics::RankMemory* memory = nullptr;  // for the renderer's sentences (why n/a, how predicted)
};

struct MemoryChart {
  std::vector<MemoryRankChart> ranks;
  double scale_bytes = 0;  // the full bar length
};

MemoryChart memory_chart(const report::Report& report);

}  // namespace shardscope::viewer
