#include "viewer/model/marks.h"

#include <algorithm>

namespace shardscope::viewer {

bool toggle_mark(std::vector<TimeMark>& marks, int64_t lo, int64_t hi) {
  const TimeMark m{std::min(lo, hi), std::max(lo, hi)};
  if (auto it = std::find(marks.begin(), marks.end(), m); it != marks.end()) {
    marks.erase(it);
    return false;
  }
  marks.push_back(m);
  return true;
}

}  // namespace shardscope::viewer
