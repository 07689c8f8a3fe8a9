// A rank's per-step table: compute, communication, overlapped and exposed communication, idle (SPEC's window metrics).
#pragma once

#include "analyzer/report/section.h"

namespace shardscope::report {

const Section& steps_section();

}  // namespace shardscope::report
