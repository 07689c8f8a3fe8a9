// Colours of the timeline: Okabe-Ito's colour-blind-safe set, one per interval class and one per collective
// kind, so all-gather, reduce-scatter and all-reduce stay apart for every reader. Host ranges are split by
// the trace's category: CUDA API calls and NVTX / user ranges each get their own colour, so a GPU trace's
// host threads are not one grey band; other host ranges (CPU ops) stay grey.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/event.h"
#include "model/strings.h"

namespace shardscope::viewer {

using Rgb = uint32_t;  // 0xRRGGBB

inline constexpr Rgb kAllGather = 0x0072B2;        // blue
inline constexpr Rgb kReduceScatter = 0xD55E00;    // vermillion
inline constexpr Rgb kAllReduce = 0x009E73;        // bluish green
inline constexpr Rgb kOtherCollective = 0xCC79A7;  // reddish purple
inline constexpr Rgb kCompute = 0xE69F00;          // orange
inline constexpr Rgb kMemory = 0x56B4E9;           // sky blue
inline constexpr Rgb kSync = 0xF0E442;             // yellow
inline constexpr Rgb kHost = 0x999999;             // grey
inline constexpr Rgb kOtherDevice = 0x666666;      // dark grey
// Beyond Okabe-Ito's eight: light enough that black labels stay readable, apart in hue from the device
// colours (host rows sit right above the streams they launch onto).
inline constexpr Rgb kCudaApi = 0xB39DDB;    // lavender: cudaLaunchKernel, cuMemcpyAsync, ...
inline constexpr Rgb kUserRange = 0xA1887F;  // taupe: NVTX ranges, record_function

Rgb colour_of(model::IntervalClass cls, model::CollectiveKind coll);
inline Rgb colour_of(const model::Event& e) { return colour_of(e.cls, e.coll); }

// What a host range is, from its category ("cuda_runtime", "cuda_driver": CUDA API; "user_annotation",
// "gpu_user_annotation", "nvtx": a user range; anything else: a CPU op).
enum class HostKind : uint8_t { Op, CudaApi, UserRange };
HostKind host_kind(std::string_view category);
Rgb colour_of(HostKind k);

// Per string id of a rank's table, the colour a host event with that category gets (0: none of the special
// categories, the class colour holds). Built once per rank, so drawing reads one array entry per event.
std::vector<Rgb> host_colours_by_category(const model::StringTable& strings);
// The event's colour with the host categories taken into account (`by_category` may be null).
inline Rgb colour_of(const model::Event& e, const std::vector<Rgb>* by_category) {
  if (e.cls == model::IntervalClass::Host && by_category && e.cat < by_category->size() && (*by_category)[e.cat] != 0)
    return (*by_category)[e.cat];
  return colour_of(e);
}

// The legend: every colour the timeline draws, in the order a reader looks for them.
struct LegendEntry {
  const char* name;
  Rgb colour;
};
const std::vector<LegendEntry>& legend();

}  // namespace shardscope::viewer
