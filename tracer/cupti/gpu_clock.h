// Puts CUPTI's timestamps on the trace's clock. CUPTI stamps with CLOCK_REALTIME on Linux unless given a
// timestamp callback, and re-registering one corrupts kernel times on CUDA 12.6u2-13.0 (pytorch#192021), so
// we leave CUPTI's clock alone and measure the offset instead: each read of it is bracketed between two
// CLOCK_MONOTONIC reads, and the tightest bracket wins. Recalibrated periodically, since NTP slews REALTIME.
#pragma once

#include <cstdint>
#include <functional>

namespace shardscope::tracer::cupti {

struct ClockFit {
  int64_t offset_ns;   // CLOCK_MONOTONIC ns = other clock's ns + offset_ns
  int64_t bracket_ns;  // the monotonic gap around the chosen read: the fit's uncertainty
};

// read() returns the other clock in ns (cuptiGetTimestamp in the backend). samples >= 1.
ClockFit calibrate(const std::function<uint64_t()>& read, int samples = 16);

}  // namespace shardscope::tracer::cupti
