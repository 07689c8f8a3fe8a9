// The run summary that opens every report (summary_render.h's lines), the load's warnings, the report's notes, and which ranks' details follow.
#pragma once

#include "analyzer/report/section.h"

namespace shardscope::report {

const Section& summary_section();

}  // namespace shardscope::report
