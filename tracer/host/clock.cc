#include "tracer/host/clock.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <string>

namespace shardscope::tracer {

namespace detail {
std::atomic<bool> g_use_tsc{false};
}

ClockPair sample_clock_pair() {
  ClockPair best{0, 0, std::numeric_limits<int64_t>::max()};
  for (int i = 0; i < 7; ++i) {
    timespec a, r, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC, &b);
    int64_t ma = int64_t(a.tv_sec) * 1'000'000'000 + a.tv_nsec;
    int64_t mb = int64_t(b.tv_sec) * 1'000'000'000 + b.tv_nsec;
    if (mb - ma < best.bracket_ns) best = {ma + (mb - ma) / 2, int64_t(r.tv_sec) * 1'000'000'000 + r.tv_nsec, mb - ma};
  }
  return best;
}

bool invariant_tsc() {
#if defined(__x86_64__)
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0)
      return line.find(" constant_tsc") != std::string::npos && line.find(" nonstop_tsc") != std::string::npos;
#endif
  return false;
}

void TscClock::sample() {
#if defined(__x86_64__)
  // Bracket the TSC read with two clock reads and keep the tightest of a few tries.
  Sample best{0, 0};
  int64_t best_gap = std::numeric_limits<int64_t>::max();
  for (int i = 0; i < 5; ++i) {
    int64_t a = now_ns();
    int64_t t = int64_t(__rdtsc());
    int64_t b = now_ns();
    if (b - a < best_gap) best_gap = b - a, best = {t, a + (b - a) / 2};
  }
  if (samples_.empty() || best.tsc > samples_.back().tsc) samples_.push_back(best);
#endif
}

int64_t TscClock::to_ns(int64_t tsc) const {
  if (samples_.size() < 2) return samples_.empty() ? tsc : samples_[0].ns;
  auto it =
      std::upper_bound(samples_.begin(), samples_.end(), tsc, [](int64_t t, const Sample& s) { return t < s.tsc; });
  size_t hi = std::clamp<size_t>(size_t(it - samples_.begin()), 1, samples_.size() - 1);
  const Sample& a = samples_[hi - 1];
  const Sample& b = samples_[hi];
  // 128-bit intermediate: (tsc - a.tsc) * (ns span) overflows 64 bits after a few seconds of span.
  __int128 num = __int128(tsc - a.tsc) * (b.ns - a.ns);
  return a.ns + int64_t(num / (b.tsc - a.tsc));
}

}  // namespace shardscope::tracer
