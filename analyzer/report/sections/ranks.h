// Each rank's details: a heading (a folded block in HTML, an object in JSON) and the rank sections in their order.
#pragma once

#include "analyzer/report/section.h"

namespace shardscope::report {

const Section& ranks_section();

}  // namespace shardscope::report
