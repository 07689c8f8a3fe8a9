// The links: each collective instance timed by its fastest rank, the link without the waiting for peers.
#pragma once

#include "analyzer/report/section.h"

namespace shardscope::report {

const Section& links_section();

}  // namespace shardscope::report
