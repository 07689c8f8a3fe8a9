// FSDP's rate limiter (limit_all_gathers): before issuing an all-gather, the issuing thread waits while
// the all-gathers in flight are at the limit. An all-gather is "throttled" when its issue waited for an
// earlier all-gather to complete while the count was at the limit. The count is the writer's own notion
// (the trainer: gathered but not yet consumed; FSDP1: freed but not yet synced), so the trace's marks of
// each limiter hit say when it was at the limit: the trainer's "rate_limited" instant (args unit), and
// PyTorch FSDP1's "FullyShardedDataParallel.rate_limiter" range, which the Kineto importer turns into the
// same instant. The trace's timing then says whether the issue really waited.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/trace.h"

namespace shardscope::metrics {

class RateLimiter {
 public:
  explicit RateLimiter(const model::Rank& rank);
  // The configured limit (run_config limit_all_gathers; `true` is FSDP1's 2), nullopt when unknown or off.
  std::optional<int> limit() const { return limit_; }
  // `ag` is one of the rank's all-gathers: a limiter hit came before its issue (no other all-gather issued
  // in between) and an earlier all-gather completed between the hit and the issue.
  bool throttled(const model::Event& ag) const { return held_from(ag).has_value(); }
  // When throttled: the limiter hit that held it back (its time).
  std::optional<int64_t> held_from(const model::Event& ag) const;

 private:
  struct Mark {
    int64_t ts;
    int unit;
  };
  struct Gather {
    int64_t issued, end;
    const model::Event* e;
  };
  std::optional<int> limit_;
  std::vector<Mark> marks_;      // by ts
  std::vector<Gather> gathers_;  // by issue
};

}  // namespace shardscope::metrics
