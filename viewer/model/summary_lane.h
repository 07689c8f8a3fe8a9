// The one lane a folded group (or rank) shows: busy where any of its tracks is, per pixel column in the
// colour that covers most of that column (the dominant class), from the tracks' level-of-detail marks.
#pragma once

#include <cstdint>
#include <vector>

#include "viewer/model/level_of_detail.h"
#include "viewer/model/timeline_layout.h"

namespace shardscope::viewer {

// Appends runs of one dominant colour as marks (lane 0; `event` the first event of the run's first column,
// `count` the pixel columns of the run). `tracks`: track indices of `rv`'s rank; `derived`: indices into
// rv.derived (a folded FSDP units group).
void summary_marks(const RankView& rv, const std::vector<uint32_t>& tracks, const Viewport& vp, std::vector<Mark>& out,
                   const std::vector<uint32_t>& derived = {});

}  // namespace shardscope::viewer
