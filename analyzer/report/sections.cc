// The report's sections, in the order the text and HTML show them. A new metric: its Section in sections/,
// one line here.
#include "analyzer/report/section.h"
#include "analyzer/report/sections/across_ranks.h"
#include "analyzer/report/sections/collectives.h"
#include "analyzer/report/sections/definitions.h"
#include "analyzer/report/sections/links.h"
#include "analyzer/report/sections/memory.h"
#include "analyzer/report/sections/prefetch.h"
#include "analyzer/report/sections/rank_bars.h"
#include "analyzer/report/sections/ranks.h"
#include "analyzer/report/sections/steps.h"
#include "analyzer/report/sections/stragglers.h"
#include "analyzer/report/sections/summary.h"
#include "analyzer/report/sections/top_device.h"
#include "analyzer/report/sections/whole_trace.h"

namespace shardscope::report {

const std::vector<const Section*>& run_sections() {
  static const std::vector<const Section*> list = {
      &summary_section(),       // the run summary first: the same lines for 2 ranks or 2,000
      &across_ranks_section(),  // HTML only
      &rank_bars_section(),     // HTML only
      &ranks_section(),         // each shown rank's details: rank_sections() below
      &stragglers_section(),   &links_section(),
      &definitions_section(),  // JSON only
  };
  return list;
}

const std::vector<const Section*>& rank_sections() {
  static const std::vector<const Section*> list = {
      &whole_trace_section(), &steps_section(),    &collectives_section(),
      &top_device_section(),  &prefetch_section(), &memory_section(),
  };
  return list;
}

}  // namespace shardscope::report
