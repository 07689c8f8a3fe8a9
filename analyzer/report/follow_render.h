// `report --follow`'s lines: one a step as it completes in a running job (analysis/follow.h), as text or as
// one JSON object a line.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analyzer/analysis/follow.h"

namespace shardscope::report {

// "step 3: 321.413 ms on rank 1, the slowest (comm 93.999 ms, exposed 82.462 ms); late: rank 0, last at 12
// of 14 collectives"
std::string follow_line(const analysis::FollowedStep& s);
// {"step":3,"ranks":[{"rank":0,"step_ns":...,"compute_ns","comm_ns","overlap_ns","exposed_ns"},...],
//  "late_rank":0,"times_last":12,"instances":14}; late_rank null when there is none.
nlohmann::json follow_json(const analysis::FollowedStep& s);

}  // namespace shardscope::report
