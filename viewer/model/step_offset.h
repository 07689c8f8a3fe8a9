// Run B beside run A, step by step: how far B's clock is from A's at the step shown at a given time of A, so
// that step k of A and step k of B start at the same x. UI-free; viewer/app/step_lock.h moves the views.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/trace.h"
#include "viewer/model/viewport.h"

namespace shardscope::viewer {

// The step of `from` at `at_ns` (the last that starts at or before it; before the first step, the first),
// matched in `to` by its number (else by its place): to's start minus from's. Past `to`'s last step (A ran
// more steps than B), the latest earlier step of `from` that `to` has: B stays where its last step was.
// None when either has no step.
std::optional<int64_t> step_offset(const std::vector<model::Step>& from, const std::vector<model::Step>& to,
                                   double at_ns);

// B's view locked to A's: A's zoom, shifted by the step offset at A's left edge (without steps on either
// side, by the runs' starts), `to_width_px` wide. Never held to B's own ends: held there, B would stop
// short of A's step at the whole-run view and near the end, and lose A's zoom when B's run is shorter.
Viewport locked_view(const Viewport& from, const std::vector<model::Step>& from_steps,
                     const std::vector<model::Step>& to_steps, int64_t from_start_ns, int64_t to_start_ns,
                     int to_width_px);

}  // namespace shardscope::viewer
