#include "viewer/model/step_offset.h"

#include <algorithm>

namespace shardscope::viewer {

namespace {
// The step of `to` matching from[k]: by number, else (numbers differ) by place.
const model::Step* match(const std::vector<model::Step>& from, const std::vector<model::Step>& to, size_t k) {
  for (const model::Step& b : to)
    if (b.number == from[k].number) return &b;
  return k < to.size() ? &to[k] : nullptr;
}
}  // namespace

std::optional<int64_t> step_offset(const std::vector<model::Step>& from, const std::vector<model::Step>& to,
                                   double at_ns) {
  if (from.empty() || to.empty()) return std::nullopt;
  // Steps are sorted by start (model::Rank::steps).
  auto it = std::upper_bound(from.begin(), from.end(), at_ns,
                             [](double t, const model::Step& s) { return t < double(s.start_ns); });
  for (size_t k = it == from.begin() ? 0 : size_t(it - from.begin()) - 1;; --k) {
    if (const model::Step* b = match(from, to, k)) return b->start_ns - from[k].start_ns;
    if (k == 0) return std::nullopt;
  }
}

Viewport locked_view(const Viewport& from, const std::vector<model::Step>& from_steps,
                     const std::vector<model::Step>& to_steps, int64_t from_start_ns, int64_t to_start_ns,
                     int to_width_px) {
  Viewport v = from;
  v.width_px = std::max(1, to_width_px);
  std::optional<int64_t> off = step_offset(from_steps, to_steps, from.start_ns);
  v.start_ns += off ? double(*off) : ns_span(from_start_ns, to_start_ns);
  return v;
}

}  // namespace shardscope::viewer
