#include "viewer/model/memory_chart.h"

#include <algorithm>

namespace shardscope::viewer {

MemoryChart memory_chart(const report::Report& report) {
  MemoryChart chart;
  double both = 0, any = 0;
  for (const report::RankReport& rr : report.ranks) {
    MemoryRankChart& rc = chart.ranks.emplace_back();
    rc.rank = rr.rank;
    rc.memory = &rr.memory;
    for (const metrics::MemoryRow& row : rr.memory.rows) {
      if (!row.measured && !row.predicted) continue;
      MemoryBar bar{row.category, row.measured, row.predicted, std::nullopt};
      if (row.measured && row.predicted) {
        both = std::max({both, *row.measured, *row.predicted});
        if (*row.predicted > 0) bar.departure = (*row.measured - *row.predicted) / *row.predicted;
      }
      any = std::max({any, row.measured.value_or(0), row.predicted.value_or(0)});
      rc.bars.push_back(std::move(bar));
    }
  }
  chart.scale_bytes = both > 0 ? both : any;
  return chart;
}

}  // namespace shardscope::viewer
