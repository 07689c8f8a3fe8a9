// A running job followed step by step (`report --follow`, the viewer's --follow): each rank's trace file is
// tailed (follow_tail.h), and a step is handed out once every rank has finished it, with the same per-step
// figures `report` gives on the finished files. A step's window on the device runs until the next step's
// first device activity (model/steps.h), so a rank's step counts as finished once two later steps are in
// its file (by then the next step's records are flushed), or when the file is complete. Memory stays
// bounded: a rank keeps only the events of the steps not yet finished, and the ones still overlapping them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/metrics/breakdown.h"
#include "model/trace.h"

namespace shardscope::analysis {

class TraceTail;

// One rank's figures for a step, as `report` measures them.
struct FollowRankStep {
  int rank = 0;
  model::Step step;
  metrics::WindowMetrics m;
};

// A step that every rank finished (or that the ranks whose files are complete hold).
struct FollowedStep {
  int64_t number = 0;
  std::vector<FollowRankStep> ranks;  // by rank
  // The straggler analysis (metrics::find_stragglers) over the step's collectives: the rank that arrived last
  // at the most of them (the lowest such rank on a tie); none with one rank or no matched instance.
  std::optional<int> late_rank;
  size_t late_count = 0, instances = 0;
  std::map<int, size_t> times_last;  // each rank that arrived last at any: at how many
};

class Follower {
 public:
  // `dir`: the job's trace folder (*.json, *.json.gz; files may appear later). `max_without_steps`: the
  // events a file may hold before its first "step" range.
  explicit Follower(std::filesystem::path dir, size_t max_without_steps = 1u << 20);
  ~Follower();
  Follower(const Follower&) = delete;
  Follower& operator=(const Follower&) = delete;

  // Reads what the files gained and returns the steps finished since the last call, by number. Throws
  // trace::TraceError for a file that is not a trace (naming file and byte), or one with no "step" range
  // (the trainer's, the tracer's) in its first `max_without_steps` events.
  std::vector<FollowedStep> poll();
  // Every rank the headers promise has a complete file and every step was handed out.
  bool done() const;
  // Files found, and how many ranks their headers say the job has (0 before any header).
  size_t files() const { return ranks_.size(); }
  int world_size() const { return world_size_; }

 private:
  struct RankState;
  void find_files();
  void take_events(RankState& r);
  void finish_steps(RankState& r, size_t keep_open);
  std::vector<FollowedStep> ready();
  std::filesystem::path dir_;
  std::vector<std::unique_ptr<RankState>> ranks_;
  size_t max_without_steps_;
  int world_size_ = 0;
  std::map<int64_t, FollowedStep> finished_;  // steps some rank finished, not yet handed out
};

}  // namespace shardscope::analysis
