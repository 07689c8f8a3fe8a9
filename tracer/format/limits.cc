#include "tracer/format/limits.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>

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

std::optional<uint64_t> parse_bytes(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  uint64_t n = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, n);  // digits only: no sign, no fraction
  if (ec != std::errc() || p == text.data() || n == 0) return std::nullopt;
  std::string unit;
  for (const char* c = p; c != end; ++c) unit += char(std::tolower(static_cast<unsigned char>(*c)));
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();  // 64MiB, 512kb, 100b
  if (!unit.empty() && unit.back() == 'i' && unit.size() == 2) unit.pop_back();
  if (unit.empty()) return n;
  static constexpr std::string_view kUnits = "kmgtpe";
  const size_t at = unit.size() == 1 ? kUnits.find(unit[0]) : std::string_view::npos;
  if (at == std::string_view::npos) return std::nullopt;
  const int shift = 10 * int(at + 1);
  if (n > (UINT64_MAX >> shift)) return std::nullopt;
  return n << shift;
}

}  // namespace shardscope::trace
