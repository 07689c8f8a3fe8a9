#include "viewer/model/live_steps.h"

namespace shardscope::viewer {

size_t LiveSteps::poll() {
  std::vector<analysis::FollowedStep> got = follower_.poll();
  for (analysis::FollowedStep& s : got) {
    for (const auto& [rank, n] : s.times_last) times_last_[rank] += n;
    steps_.push_back(std::move(s));
  }
  return got.size();
}

std::optional<int64_t> LiveSteps::newest() const {
  if (steps_.empty()) return std::nullopt;
  return steps_.back().number;
}

int LiveSteps::straggler() const {
  int worst = -1;
  size_t most = 0;
  for (const auto& [rank, n] : times_last_)
    if (n > most) worst = rank, most = n;
  return worst;
}

void LiveSteps::show_step(int64_t number) {
  following_ = newest() && number == *newest();
  chosen_ = number;
}

}  // namespace shardscope::viewer
