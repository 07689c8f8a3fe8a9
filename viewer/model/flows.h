// The flows drawn from the selected event, as Perfetto draws them: from a host launch to the kernel it
// started (and back), and between the ranks' copies of one collective instance, the rank that arrived last
// marked. Which events link is decided here, apart from any widget: the launch links are the rank index's
// (model/index.h), the instances and the last arrival the analysis's (across_ranks.h, the report's
// stragglers). Where the ends are drawn, a folded group's row included, is the widget's.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/index.h"
#include "viewer/model/across_ranks.h"

namespace shardscope::viewer {

struct FlowEnd {
  uint32_t rank = 0;  // index into trace.ranks (== the layout's ranks)
  model::EventRef event;
  bool operator==(const FlowEnd&) const = default;
};

struct Flow {
  FlowEnd from, to;
  bool operator==(const Flow&) const = default;
};

// The launch → kernel flows touching `selected` on layout rank `rank`: from its launch when it is a device
// event, to the device events it launched when it is a host call (a collective's host range can start more
// than one). Empty when it is neither.
std::vector<Flow> launch_flows(const model::RankIndex& index, uint32_t rank, model::EventRef selected);

struct CollectiveFlows {
  std::vector<FlowEnd> ends;   // the instance on each rank that has it, in rank order
  std::optional<size_t> last;  // into `ends`: the rank the straggler analysis names last at it
  int64_t late_by_ns = 0;      // its start after the next-latest rank's (the analysis's late_by_ns)
  // With a last arrival: every other rank's copy → the last one's (what they waited for). Without (the
  // analysis did not match the instance): rank to next rank, in rank order.
  std::vector<Flow> links;
};

// The instance of the collective `selected` on rank `rank` across every rank; empty when `selected` is no
// collective the analysis names (or no other rank has it).
CollectiveFlows collective_flows(const AcrossRanks& across, uint32_t rank, model::EventRef selected);

}  // namespace shardscope::viewer
