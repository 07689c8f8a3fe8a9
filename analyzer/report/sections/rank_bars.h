// HTML: where each rank's time went, one stacked bar per rank (every rank up to 64 of them, the selected ones beyond).
#pragma once

#include "analyzer/report/section.h"

namespace shardscope::report {

const Section& rank_bars_section();

}  // namespace shardscope::report
