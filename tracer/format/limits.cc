#include "tracer/format/limits.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

namespace shardscope::trace {

Limits& limits() {
  static Limits l;
  return l;
}

uint64_t default_max_text_bytes() {
  uint64_t mem = UINT64_MAX;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) mem = uint64_t(pages) * uint64_t(page);
  for (int which : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit r{};
    if (getrlimit(which, &r) == 0 && r.rlim_cur != RLIM_INFINITY) mem = std::min<uint64_t>(mem, r.rlim_cur);
  }
  return std::min<uint64_t>(4ull << 30, std::max<uint64_t>(mem / 8, 1ull << 20));
}

uint64_t max_text_bytes() { return limits().max_text_bytes ? limits().max_text_bytes : default_max_text_bytes(); }

std::string show_bytes(uint64_t n) {
  if (n >= (1ull << 30) && n % (1ull << 30) == 0) return std::to_string(n >> 30) + " GiB";
  if (n >= (1ull << 20) && n % (1ull << 20) == 0) return std::to_string(n >> 20) + " MiB";
  if (n >= 10'000'000) return std::to_string(n / 1'000'000) + " MB";
  return std::to_string(n) + " bytes";
}

}  // namespace shardscope::trace
