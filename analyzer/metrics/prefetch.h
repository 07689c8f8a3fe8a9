// SPEC's BACKWARD_PRE verification. In backward, units run u_L … u_1; for each backward compute BC_i and the
// next unit's all-gather AG_{i-1}: issue lead (start of BC_i − issue of AG_{i-1}), hidden share
// (|AG_{i-1} ∩ C| / |AG_{i-1}|) and exposed wait (the part of AG_{i-1} not covered by compute before BC_{i-1}
// starts); per step a verdict with its reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/model/trace.h"

namespace shardscope::metrics {

struct UnitPrefetch {
  int unit = -1;       // i: the unit whose backward compute BC_i should hide the next all-gather
  int next_unit = -1;  // i-1: the unit whose all-gather AG_{i-1} that is
  int64_t issue_lead_ns = 0;   // > 0: issued before BC_i started (prefetch order)
  int64_t ag_ns = 0;           // |AG_{i-1}|
  int64_t hidden_ns = 0;       // |AG_{i-1} ∩ C|
  int64_t exposed_wait_ns = 0;
  int64_t queued_ns = 0;       // AG start − AG issue: time it waited to run after being issued
  bool serialized_behind_rs = false;  // it waited for a reduce-scatter on its own stream to finish
  bool throttled = false;             // its issue waited on the rate limiter (rate_limiter.h)
  double hidden_share() const { return ag_ns > 0 ? double(hidden_ns) / double(ag_ns) : 0.0; }
};

enum class Verdict { Effective, NotEffective, NotApplicable };

struct StepPrefetch {
  int64_t step = 0;
  std::vector<UnitPrefetch> units;
  Verdict verdict = Verdict::NotApplicable;
  std::string reason;  // why not effective, or why n/a; for effective, the evidence
  int64_t ag_ns = 0, hidden_ns = 0, exposed_wait_ns = 0;
  double hidden_share() const { return ag_ns > 0 ? double(hidden_ns) / double(ag_ns) : 0.0; }
};

struct RankPrefetch {
  int rank = 0;
  std::string configured;  // run_config backward_prefetch ("pre", "post", "none"), empty when unknown
  std::vector<StepPrefetch> steps;
  std::string not_applicable;  // non-empty: why nothing could be checked on this rank
  std::string unit_identity;   // non-empty: units were inferred (from hook order), not named by the trace
  Verdict verdict() const;     // effective only when every checked step is
};

// Most backward all-gather time must be hidden for a step to count as effective.
inline constexpr double kHiddenShareThreshold = 0.5;

RankPrefetch check_prefetch(const model::Rank& rank);

}  // namespace shardscope::metrics
