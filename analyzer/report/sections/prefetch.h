// A rank's BACKWARD_PRE check: the run's verdict and each shown step's (prefetch_render.h's sentences).
#pragma once

#include "analyzer/report/section.h"

namespace shardscope::report {

const Section& prefetch_section();

}  // namespace shardscope::report
