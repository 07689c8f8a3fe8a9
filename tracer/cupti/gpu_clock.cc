#include "tracer/cupti/gpu_clock.h"

#include <limits>

#include "tracer/host/clock.h"

namespace shardscope::tracer::cupti {

ClockFit calibrate(const std::function<uint64_t()>& read, int samples) {
  ClockFit best{0, std::numeric_limits<int64_t>::max()};
  for (int i = 0; i < samples; ++i) {
    int64_t before = now_ns();
    int64_t other = int64_t(read());
    int64_t after = now_ns();
    if (after - before < best.bracket_ns) best = {before + (after - before) / 2 - other, after - before};
  }
  return best;
}

}  // namespace shardscope::tracer::cupti
