// Colours of the timeline: Okabe-Ito's colour-blind-safe set, one per interval class and one per collective
// kind, so all-gather, reduce-scatter and all-reduce stay apart for every reader.
#pragma once

#include <cstdint>

#include "model/event.h"

namespace shardscope::viewer {

using Rgb = uint32_t;  // 0xRRGGBB

inline constexpr Rgb kAllGather = 0x0072B2;      // blue
inline constexpr Rgb kReduceScatter = 0xD55E00;  // vermillion
inline constexpr Rgb kAllReduce = 0x009E73;      // bluish green
inline constexpr Rgb kOtherCollective = 0xCC79A7;  // reddish purple
inline constexpr Rgb kCompute = 0xE69F00;        // orange
inline constexpr Rgb kMemory = 0x56B4E9;         // sky blue
inline constexpr Rgb kSync = 0xF0E442;           // yellow
inline constexpr Rgb kHost = 0x999999;           // grey
inline constexpr Rgb kOtherDevice = 0x666666;    // dark grey

Rgb colour_of(model::IntervalClass cls, model::CollectiveKind coll);
inline Rgb colour_of(const model::Event& e) { return colour_of(e.cls, e.coll); }

}  // namespace shardscope::viewer
