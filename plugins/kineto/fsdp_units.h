// What FSDP's record_function labels in a PyTorch trace say about units, whichever FSDP wrote them: which
// unit each host window belongs to. fsdp2_labels.cc reads FSDP2's labels (they name the module),
// fsdp1_labels.cc FSDP1's (they do not: units come from the order of its hooks); fsdp_labels.cc turns
// either into unit-tagged all-gathers and the ranges the prefetch check reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/model/trace.h"

namespace shardscope::plugins {

// One host 'X' range of the trace, in time order with the others.
struct HostLabel {
  std::string_view name;
  int64_t ts, end;
  uint32_t track;
  bool contains(const HostLabel& o) const { return track == o.track && ts <= o.ts && o.end <= end; }
};

struct UnitWindow {
  int64_t ts, end;
  int unit;
};

struct UnitLabels {
  std::vector<std::string> names;       // by unit number, units numbered in forward order
  std::vector<UnitWindow> gathers;      // an all-gather launched inside belongs to the unit (innermost wins)
  std::vector<UnitWindow> pre_backward, post_backward;  // each unit's backward hooks
  std::vector<int64_t> backward_starts;                 // where each backward pass begins
  std::vector<UnitWindow> rate_limited;                 // the rate limiter held back this unit's all-gather
  std::string identity;                                 // non-empty: how units were inferred when not named
};

// FSDP2 (fully_shard): nullopt when the labels hold none of its module-naming labels.
std::optional<UnitLabels> fsdp2_units(const std::vector<HostLabel>& labels);
// FSDP1 (FullyShardedDataParallel): nullopt when the labels hold none of its hook labels. `steps` (may be
// empty) split the trace into iterations.
std::optional<UnitLabels> fsdp1_units(const std::vector<HostLabel>& labels, const std::vector<model::Step>& steps);

}  // namespace shardscope::plugins
