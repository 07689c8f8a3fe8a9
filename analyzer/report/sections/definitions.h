// JSON: what each column of the tables means (definitions.h; the text has it as legends, the HTML as tooltips).
#pragma once

#include "analyzer/report/section.h"

namespace shardscope::report {

const Section& definitions_section();

}  // namespace shardscope::report
