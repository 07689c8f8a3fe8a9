// The replay model of a measured run (docs/whatif.md): every device op of every rank with its measured
// duration, the host launch it waits for, the stream it runs on in order, and the FSDP roles that a what-if
// reschedules (a unit's all-gather, the compute that consumes it, the reduce-scatter after its backward).
// Built from the model alone, one rank at a time (build_rank_graph: the rank's events can go once it is
// made), the ranks' graphs then joined; the schedule is replay.h's, the changes whatif.h's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/metrics/instances.h"
#include "model/trace.h"

namespace shardscope::metrics::replay {

inline constexpr int32_t kNone = -1;

enum class Role : uint8_t {
  Launch,         // a host launch (zero length): the host's chain of launches on one thread
  Compute,        // a compute kernel (or any device work that is not communication)
  AllGather,      // a unit's all-gather kernel
  ReduceScatter,  // a reduce-scatter kernel
  Comm,           // any other collective
};

struct Op {
  int32_t rank = 0;                      // index into Graph::ranks
  int32_t track = kNone, index = kNone;  // the event it replays
  Role role = Role::Compute;
  int32_t lane = kNone;  // the stream (or, for a launch, the host thread) it runs on
  int32_t step = -1, unit = -1;
  bool backward = false;  // an all-gather consumed by backward compute; a kernel of a unit's backward
  int64_t ts_ns = 0, dur_ns = 0;
  // A collective's own time: from the last rank's arrival (its latest start) to its end, as measured.
  int64_t own_ns = 0;
  int64_t gap_ns = 0;        // a launch: its start minus the previous launch's on its thread (the host's gap)
  int32_t launch = kNone;    // a device op: the op of its host launch
  int32_t instance = kNone;  // a collective: index into Graph::instances
  // An all-gather: the first and last kernel of the compute that consumes it, and of the unit compute just
  // before that one in issue order (what a prefetch hides it behind). A reduce-scatter: the last kernel
  // of the backward that produced it (in consumer_last).
  int32_t consumer_first = kNone, consumer_last = kNone;
  int32_t before_first = kNone, before_last = kNone;
  // Compute that hides communication: a compute kernel or a CPU run's unit range (not a copy or a memset).
  bool hides = false;
  bool throttled = false;  // an all-gather the rate limiter held back (RateLimiter::throttled)
};

// A host thread blocked on the device (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize):
// its next launch waited for the device work that ended the block.
struct HostWait {
  int32_t rank = 0, lane = kNone;  // the thread's lane
  int64_t ts_ns = 0, end_ns = 0;
};

// What the replay keeps of a rank besides its ops: its steps and the FSDP settings it reschedules.
struct RankInfo {
  int rank = 0;  // model::Rank::rank
  std::vector<model::Step> steps;
  std::string backward_prefetch;  // run_config's, as written ("" when absent)
  std::optional<int> limit;       // the rate limiter's (RateLimiter::limit)
};

struct Graph {
  std::vector<Op> ops;
  std::vector<std::vector<int32_t>> lanes;      // each lane's ops in measured order
  std::vector<std::vector<int32_t>> instances;  // each collective instance's ops, one a rank
  // Each rank's all-gathers in issue order (the rate limiter's count).
  std::vector<std::vector<int32_t>> all_gathers;
  std::vector<RankInfo> ranks;
  std::vector<HostWait> host_waits;
  bool on_host = true;  // no rank has a device stream: a CPU run, whose device is its host
};

// One rank's graph (its ops' rank 0), no event of it kept, and the collective instance each of its
// collectives is. Device ops are the device streams' kernels, copies and collectives (not the importers'
// derived unit ranges); their launches come from model::index_rank.
struct RankGraph {
  Graph g;
  std::vector<std::pair<InstanceId, int32_t>> collectives;  // instance → the rank's op
};
RankGraph build_rank_graph(const model::Rank& rank);

// The ranks' graphs as one, ordered by rank number (stable: equal numbers keep the order given, the loader's
// by file), each collective matched with its instance on the other ranks.
Graph join(std::vector<RankGraph> ranks);

// join() of build_rank_graph() of every rank of `trace`.
Graph build_graph(const model::Trace& trace);

}  // namespace shardscope::metrics::replay
