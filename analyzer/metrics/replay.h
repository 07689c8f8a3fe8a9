// The replay of a graph (replay_graph.h) under one wiring: each op starts when its host launch, the op
// before it on its lane and the ops it waits for allow, and lasts its duration; a collective ends its own
// time after the last rank arrived. A host launch follows the previous one on its thread by the host's
// gap, or the device op the host waited for (the rate limiter) by what the host took after it.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/metrics/replay_graph.h"

namespace shardscope::metrics::replay {

// An op waits for another's end, and then `lag` more (what it took to start after it, as measured).
struct Wait {
  int32_t op = kNone;
  int64_t lag = 0;
};

struct Wiring {
  std::vector<int32_t> prev;             // the op before it on its lane; kNone: the lane's first
  std::vector<int32_t> release;          // the launch whose start releases it; kNone: none
  std::vector<std::vector<Wait>> after;  // the ops that must end before it starts
  // A device op: how long after every constraint it still started, as measured (the device's own start-up,
  // or a wait the trace does not show); it stays under a change.
  std::vector<int64_t> hold;
  std::vector<int32_t> wait_for;   // a launch: the device op the host waits for; kNone: none
  std::vector<int64_t> wait_post;  // a launch: host time from that op's end to the launch
  std::vector<int64_t> gap;        // a launch: the host's gap after the previous launch
  std::vector<int64_t> dur;        // what it lasts: a collective, its own time
  // Lanes as wired (a what-if may move an op on its lane); prev follows from them (link_lanes).
  std::vector<std::vector<int32_t>> lanes;
};

// The run as measured: lane order, launches, FSDP's dependencies where the timeline shows them held (an
// all-gather before its consumer's compute, a reduce-scatter after its backward, an all-gather that waited
// for the compute before it), the rate limiter where the trace says it held an issue back, and the waits
// across streams the trace does not mark (an op that started long after all of these, just after an op on
// another of its rank's streams ended, waited for it: FSDP's stream waits). What is left is each op's hold.
Wiring measured_wiring(const Graph& g);

// Sets `prev` from `lanes`.
void link_lanes(Wiring& w);

struct Schedule {
  std::vector<int64_t> start, end;  // per op
  int passes = 0;
  bool settled = false;  // false: the wiring has a cycle (the passes ran out)
};

// The earliest times every constraint allows: passes over the ops in measured order until nothing moves.
Schedule schedule(const Graph& g, const Wiring& w);

}  // namespace shardscope::metrics::replay
