// The reduce half: rank summaries in (any order, from any number of workers or processes), the run's report
// out. What is kept across ranks is the instance table (it grows with the collective instances, not with
// ranks x instances) and each rank's report.
#pragma once

#include <map>
#include <vector>

#include "analyzer/analysis/report.h"
#include "analyzer/analysis/summary.h"
#include "analyzer/metrics/instances.h"

namespace shardscope::analysis {

class RunReducer {
 public:
  // Folds the summary's arrivals into the table (and drops them); keeps its report.
  void add(RankSummary&& summary);
  // Another reducer's ranks (a disjoint set) joined to these.
  void merge(RunReducer&& other);
  // The reduce done elsewhere (MPI: the table reduced across processes, each rank's report and world size
  // sent on its own).
  static RunReducer from_parts(metrics::InstanceTable table,
                               std::vector<std::pair<metrics::RankKey, report::RankReport>> ranks,
                               std::map<metrics::RankKey, int> world);

  // The report: ranks in rank order, each rank's prefetch re-judged with its late peers, the run's verdict
  // and stragglers. `Scope::PrefetchOnly` leaves the stragglers out.
  report::Report finish(std::vector<std::string> inputs, std::vector<std::string> warnings, Scope scope) &&;

  const metrics::InstanceTable& table() const { return table_; }

 private:
  metrics::InstanceTable table_;
  std::vector<std::pair<metrics::RankKey, report::RankReport>> ranks_;
  std::map<metrics::RankKey, int> world_;  // each rank's world size, as its trace says it (add())
};

}  // namespace shardscope::analysis
