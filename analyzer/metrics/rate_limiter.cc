#include "analyzer/metrics/rate_limiter.h"

#include <algorithm>

#include "tracer/format/keys.h"

namespace shardscope::metrics {

namespace {}  // namespace

RateLimiter::RateLimiter(const model::Rank& rank) {
  if (rank.shape.limit_all_gathers > 0) limit_ = rank.shape.limit_all_gathers;
  model::StringId mark = rank.strings.find(keys::kRateLimited);
  for (const model::Track& t : rank.tracks)
    for (const model::Event& e : t.events) {
      if (e.name == mark && !e.is_device()) marks_.push_back({e.ts_ns, e.unit});
      else if (e.cls == model::IntervalClass::Communication && e.coll == model::CollectiveKind::AllGather &&
               e.ph == 'X')
        gathers_.push_back({e.issued_or_start_ns(), e.end_ns(), &e});
    }
  std::sort(marks_.begin(), marks_.end(), [](const Mark& a, const Mark& b) { return a.ts < b.ts; });
  std::sort(gathers_.begin(), gathers_.end(), [](const Gather& a, const Gather& b) { return a.issued < b.issued; });
}

std::optional<int64_t> RateLimiter::held_from(const model::Event& ag) const {
  const int64_t at = ag.issued_or_start_ns();
  // The latest hit at or before the issue that is about this all-gather's unit (or names none).
  const Mark* hit = nullptr;
  for (auto it = std::upper_bound(marks_.begin(), marks_.end(), at, [](int64_t t, const Mark&m) { return t < m.ts; });
       it != marks_.begin();) {
    --it;
    if (it->unit < 0 || ag.unit < 0 || it->unit == ag.unit) {
      hit = &*it;
      break;
    }
  }
  if (!hit) return std::nullopt;
  bool waited = false;
  for (const Gather& g : gathers_) {
    if (g.e == &ag) continue;
    if (g.issued > hit->ts && g.issued < at) return std::nullopt;  // the hit held back another all-gather
    waited |= g.issued <= hit->ts && g.end >= hit->ts && g.end <= at;
  }
  return waited ? std::optional<int64_t>(hit->ts) : std::nullopt;
}

}  // namespace shardscope::metrics
