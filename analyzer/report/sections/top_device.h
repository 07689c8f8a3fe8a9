// A rank's device time by name, the longest first.
#pragma once

#include "analyzer/report/section.h"

namespace shardscope::report {

const Section& top_device_section();

}  // namespace shardscope::report
