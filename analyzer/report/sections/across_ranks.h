// HTML: each rank's step time and exposed communication as one dot per rank, so that a straggler stands out among a thousand.
#pragma once

#include "analyzer/report/section.h"

namespace shardscope::report {

const Section& across_ranks_section();

}  // namespace shardscope::report
