// The trace's one clock: CLOCK_MONOTONIC in integer nanoseconds. A (monotonic, realtime) pair recorded at
// start and periodically lets an analysis align ranks on different hosts.
//
// On x86-64 with an invariant TSC the hot path reads the TSC instead (about 9 ns against 21 ns for
// clock_gettime on our VMs) and the flusher maps it to CLOCK_MONOTONIC by interpolating between
// (tsc, monotonic) samples it takes at every flush; the file only ever holds CLOCK_MONOTONIC ns.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <vector>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace shardscope::tracer {

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct ClockPair {
  int64_t monotonic_ns;
  int64_t realtime_ns;
  int64_t bracket_ns;  // uncertainty: the monotonic gap around the realtime read
};

// Reads realtime between two monotonic reads several times and keeps the tightest bracket.
ClockPair sample_clock_pair();

namespace detail {
// Chosen by the first start() and never changed after. Atomic: traced threads read it without a lock, having
// seen tracing turn on through a relaxed load (on x86, the only place it is true, a relaxed load is a plain one).
extern std::atomic<bool> g_use_tsc;
}  // namespace detail

// A raw timestamp for the hot path: TSC ticks when g_use_tsc, else CLOCK_MONOTONIC ns.
inline int64_t stamp() {
#if defined(__x86_64__)
  if (detail::g_use_tsc.load(std::memory_order_relaxed)) return int64_t(__rdtsc());
#endif
  return now_ns();
}

// True when the CPU's TSC runs at a constant rate across frequency changes and sleep states.
bool invariant_tsc();

// Maps TSC ticks to CLOCK_MONOTONIC ns, piecewise linear between samples (which follows NTP's slewing of
// CLOCK_MONOTONIC), extrapolating from the nearest segment outside them. Used by the flusher thread only.
class TscClock {
 public:
  void sample();  // takes one (tsc, monotonic) pair now
  int64_t to_ns(int64_t tsc) const;
  size_t samples() const { return samples_.size(); }

 private:
  struct Sample {
    int64_t tsc, ns;
  };
  std::vector<Sample> samples_;
};

}  // namespace shardscope::tracer
