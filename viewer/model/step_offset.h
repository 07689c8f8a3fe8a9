// Run B beside run A, step by step: how far B's clock is from A's at the step shown at a given time of A, so
// that step k of A and step k of B start at the same x. UI-free; viewer/app/step_lock.h moves the views.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/trace.h"

namespace shardscope::viewer {

// The step of `from` at `at_ns` (the last that starts at or before it; before the first step, the first),
// matched in `to` by its number (else by its place): to's start minus from's. None when either has no step.
std::optional<int64_t> step_offset(const std::vector<model::Step>& from, const std::vector<model::Step>& to,
                                   double at_ns);

}  // namespace shardscope::viewer
