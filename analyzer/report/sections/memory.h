// A rank's memory: each category's measured peak against the ZeRO model's prediction (memory_render.h's sentences).
#pragma once

#include "analyzer/report/section.h"

namespace shardscope::report {

const Section& memory_section();

}  // namespace shardscope::report
