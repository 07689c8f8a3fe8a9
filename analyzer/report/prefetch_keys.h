// The JSON keys of the prefetch check's output (`report --format json` under "prefetch", `check-prefetch
// --format json`), beside the renderer that writes them.
#pragma once

namespace shardscope::report::prefetch_keys {

inline constexpr const char* kCause = "cause";
inline constexpr const char* kNotApplicable = "not_applicable";
inline constexpr const char* kNaCount = "not_applicable_count";
inline constexpr const char* kWarmUp = "warm_up";
inline constexpr const char* kMissingPairs = "pairs_without_all_gather";
inline constexpr const char* kLimit = "limit_all_gathers";
inline constexpr const char* kForwardAllGathers = "forward_all_gathers";
inline constexpr const char* kForwardThrottled = "forward_throttled";
inline constexpr const char* kSteadyEffective = "steady_steps_effective";
inline constexpr const char* kSteadyNotEffective = "steady_steps_not_effective";
inline constexpr const char* kSteadyHiddenShare = "steady_hidden_share";
inline constexpr const char* kRule = "rule";
inline constexpr const char* kEvidence = "evidence";
// A unit pair's events and times.
inline constexpr const char* kCompute = "backward_compute";
inline constexpr const char* kAllGather = "all_gather";
inline constexpr const char* kNextCompute = "next_backward_compute";
inline constexpr const char* kReduceScatter = "reduce_scatter";
inline constexpr const char* kTrack = "track";
inline constexpr const char* kIndex = "index";
inline constexpr const char* kStartNs = "start_ns";
inline constexpr const char* kEndNs = "end_ns";
inline constexpr const char* kIssuedNs = "issued_ns";
inline constexpr const char* kQueuedNs = "queued_ns";
inline constexpr const char* kLatePeer = "late_peer";
inline constexpr const char* kLatePeerNs = "late_peer_ns";

}  // namespace shardscope::report::prefetch_keys
