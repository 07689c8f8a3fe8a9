// The viewer's live view of a running job (`shardscope-viewer --follow DIR`): the steps every rank has
// finished, appended as they land (analysis/follow.h, the figures `report` gives), the straggler so far,
// and which step the view shows: the newest while it follows, the one the user went back to otherwise.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "analyzer/analysis/follow.h"

namespace shardscope::viewer {

class LiveSteps {
 public:
  explicit LiveSteps(std::filesystem::path dir) : follower_(std::move(dir)) {}

  // Reads what the rank files gained; returns how many steps were appended. Throws what Follower::poll throws.
  size_t poll();
  // Every rank's file is complete and every step is here.
  bool done() const { return follower_.done(); }

  const std::vector<analysis::FollowedStep>& steps() const { return steps_; }
  std::optional<int64_t> newest() const;
  // Collective instances each rank arrived last at, over the steps so far; the straggler: the rank last at
  // the most (the lowest on a tie), -1 while none.
  const std::map<int, size_t>& times_last() const { return times_last_; }
  int straggler() const;

  // The step the view shows: the newest while following, else the one the user chose.
  std::optional<int64_t> shown() const { return following_ ? newest() : chosen_; }
  bool following() const { return following_; }
  // The user went to a step: choosing the newest follows again, an older one stops following.
  void show_step(int64_t number);
  void follow_newest() { following_ = true; }

 private:
  analysis::Follower follower_;
  std::vector<analysis::FollowedStep> steps_;
  std::map<int, size_t> times_last_;
  bool following_ = true;
  std::optional<int64_t> chosen_;
};

}  // namespace shardscope::viewer
