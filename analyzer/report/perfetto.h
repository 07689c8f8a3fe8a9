// The run as one Chrome-trace JSON file (what ui.perfetto.dev and chrome://tracing open): every rank's
// events on the wall clock, as the report aligns ranks (metrics/clock_map.h), and shardscope's findings as
// tracks of their own beside each rank's: the step windows, the exposed communication inside them (the
// report's |M| - |M ∩ C|, as intervals), each unit's prefetch verdict at its all-gather, and a flow from the
// first to the last rank that arrived at each collective every rank has. Written rank by rank, as the ranks
// are read: only one rank's events are in memory.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <set>

#include "analyzer/metrics/clock_map.h"
#include "analyzer/metrics/instances.h"
#include "model/trace.h"

namespace shardscope::report {

// The tracks the findings are written on, in every rank's process: thread ids above any a trace uses.
inline constexpr int64_t kStepsTid = 1'000'000'001, kExposedTid = 1'000'000'002, kPrefetchTid = 1'000'000'003;
inline constexpr const char* kStepsTrack = "shardscope: steps";
inline constexpr const char* kExposedTrack = "shardscope: exposed communication";
inline constexpr const char* kPrefetchTrack = "shardscope: prefetch verdict";
inline constexpr const char* kLastArrivalCat = "shardscope: last arrival";

class PerfettoWriter {
 public:
  // `table`: the run's collective instances (every rank's arrivals folded); `origin_ns`: the wall-clock time
  // written as 0 (the earliest rank's first event).
  PerfettoWriter(std::ostream& out, const metrics::InstanceTable& table, int64_t origin_ns);
  // One rank: its process, its tracks and events, then its findings. `order`: its file's place.
  void rank(const model::Rank& rank, uint64_t order);
  // Closes the JSON; nothing may be written after.
  void finish();

 private:
  struct Place;  // the rank being written: its process and clock
  void event(const std::string& json);
  void tracks(const model::Rank& rank, const Place& at);
  void steps_and_exposed(const model::Rank& rank, const Place& at);
  void prefetch(const model::Rank& rank, metrics::RankKey key, const Place& at);
  void last_arrivals(const model::Rank& rank, metrics::RankKey key, const Place& at);

  std::ostream& out_;
  const metrics::InstanceTable& table_;
  int64_t origin_ns_;
  bool first_ = true;
  std::map<metrics::InstanceId, uint64_t> flow_id_;  // each instance with a late rank: its flow's id
  std::set<uint64_t> flow_started_;                  // the flows whose first arrival is written
};

}  // namespace shardscope::report
