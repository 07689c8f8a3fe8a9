// The stragglers: how often each rank arrived last at a collective instance, and by how much.
#pragma once

#include "analyzer/report/section.h"

namespace shardscope::report {

const Section& stragglers_section();

}  // namespace shardscope::report
