#include "viewer/model/step_offset.h"

#include <algorithm>

namespace shardscope::viewer {

std::optional<int64_t> step_offset(const std::vector<model::Step>& from, const std::vector<model::Step>& to,
                                   double at_ns) {
  if (from.empty() || to.empty()) return std::nullopt;
  // Steps are sorted by start (model::Rank::steps).
  auto it = std::upper_bound(from.begin(), from.end(), at_ns,
                             [](double t, const model::Step& s) { return t < double(s.start_ns); });
  const size_t k = it == from.begin() ? 0 : size_t(it - from.begin()) - 1;
  const model::Step& a = from[k];
  for (const model::Step& b : to)
    if (b.number == a.number) return b.start_ns - a.start_ns;
  if (k < to.size()) return to[k].start_ns - a.start_ns;
  return std::nullopt;
}

}  // namespace shardscope::viewer
