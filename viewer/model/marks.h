// Marks (Perfetto's M): time ranges the user pinned as bands across every row, kept until cleared. M on a
// range already marked takes that mark away, so the same key sets and clears it.
#pragma once

#include <cstdint>
#include <vector>

namespace shardscope::viewer {

struct TimeMark {
  int64_t lo = 0, hi = 0;  // an instant's mark has lo == hi
  bool operator==(const TimeMark&) const = default;
};

// Adds [lo, hi) to `marks`, or removes it when it is there already; true when it was added.
bool toggle_mark(std::vector<TimeMark>& marks, int64_t lo, int64_t hi);

}  // namespace shardscope::viewer
