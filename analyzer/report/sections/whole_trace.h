// A rank's whole-trace breakdown, HTA's temporal breakdown and overlap reproduced (metrics/breakdown.h).
#pragma once

#include "analyzer/report/section.h"

namespace shardscope::report {

const Section& whole_trace_section();

}  // namespace shardscope::report
