// What FSDP's record_function labels in a PyTorch trace say about units, whichever FSDP wrote them: which
// unit each host window belongs to. fsdp2_labels.cc reads FSDP2's labels (they name the module),
// fsdp1_labels.cc FSDP1's (they do not: units come from the order of its hooks); fsdp_labels.cc turns
// either into unit-tagged all-gathers and the ranges the prefetch check reads.
//
// Only host labels count: the user_annotation ranges on the thread that ran the hook. Kineto mirrors some
// of them onto the GPU streams as gpu_user_annotation ranges, with the same names and device times (which
// lag the host by up to a few steps); those say nothing about the hooks' order or their threads and are
// left out before any of this runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace shardscope::plugins {

// One host 'X' range of the trace. The labels given to the functions below are in time order (a parent
// before its children).
struct HostLabel {
  std::string_view name;
  int64_t ts, end;
  uint32_t track;
  int32_t step;  // index into Rank::steps of the ProfilerStep whose host range holds ts, -1 none
  bool contains(const HostLabel& o) const { return track == o.track && ts <= o.ts && o.end <= end; }
};

struct UnitWindow {
  int64_t ts, end;
  int unit;
  uint32_t track;  // the thread whose launches it owns
  int32_t step;
};

struct UnitLabels {
  std::vector<std::string> names;  // by unit number, units numbered in forward order
  std::vector<UnitWindow>
      gathers;  // an all-gather launched inside, on the same thread, belongs to the unit (innermost wins)
  std::vector<UnitWindow> pre_backward, post_backward;  // each unit's backward hooks
  std::vector<const HostLabel*> backward_starts;        // the first backward hook of each backward pass
  std::vector<const HostLabel*>
      rate_limited;  // the rate limiter held back an all-gather (its unit: the gather window around it)
  model::UnitIdentity identity = model::UnitIdentity::Named;
};

// FSDP2 (fully_shard): nullopt when the labels hold none of its per-module labels.
std::optional<UnitLabels> fsdp2_units(const std::vector<HostLabel>& labels);
// FSDP1 (FullyShardedDataParallel): nullopt when the labels hold none of its hook labels. A ProfilerStep
// boundary (HostLabel::step) always starts a new iteration.
std::optional<UnitLabels> fsdp1_units(const std::vector<HostLabel>& labels);

}  // namespace shardscope::plugins
