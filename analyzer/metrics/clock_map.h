// Maps a rank's trace clock onto the wall clock through its (monotonic, realtime) pairs, so that ranks on
// different machines, whose monotonic clocks start anywhere, can be compared on one time axis.
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace shardscope::metrics {

class ClockMap {
 public:
  explicit ClockMap(std::vector<model::ClockPair> pairs);  // any order; repeated trace times keep the first
  // Between two pairs: linear interpolation (absorbs the drift of one clock against the other); before the
  // first or after the last: that pair's offset. With no pairs: t unchanged.
  int64_t to_realtime(int64_t trace_ns) const;
  bool mapped() const { return !pairs_.empty(); }

 private:
  std::vector<model::ClockPair> pairs_;
};

}  // namespace shardscope::metrics
