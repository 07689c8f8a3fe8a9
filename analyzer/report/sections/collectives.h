// A rank's collectives: count, bytes, time, algorithm and bus bandwidth, and the wait for peers.
#pragma once

#include "analyzer/report/section.h"

namespace shardscope::report {

const Section& collectives_section();

}  // namespace shardscope::report
