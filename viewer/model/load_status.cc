#include "viewer/model/load_status.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

namespace shardscope::viewer {
namespace {

std::string count(uint64_t n) {
  if (n >= 1'000'000) return fmt::format("{:.1f} M", double(n) / 1e6);
  if (n >= 10'000) return fmt::format("{:.0f} k", double(n) / 1e3);
  return fmt::format("{}", n);
}

// MB with a decimal under 10 MB, where a whole number would sit still for several reports.
std::string mb(uint64_t bytes) {
  const double v = double(bytes) / 1e6;
  return v < 10 ? fmt::format("{:.1f}", v) : fmt::format("{:.0f}", v);
}

}  // namespace

std::string load_status_text(const plugins::LoadProgress& p) {
  if (!p.reading.empty())
    return fmt::format("reading {} — {} / {} MB, {} events", std::filesystem::path(p.reading).filename().string(),
                       mb(p.reading_bytes_done), mb(p.reading_bytes), count(p.reading_events));
  if (p.files_done == 0) return fmt::format("opening {} file{}", p.files, p.files == 1 ? "" : "s");
  if (p.files_done == p.files) return fmt::format("analysing {} file{}", p.files, p.files == 1 ? "" : "s");
  return fmt::format("{} of {} files read", p.files_done, p.files);
}

int load_permille(const plugins::LoadProgress& p) {
  if (p.bytes == 0) return p.files ? int(1000 * p.files_done / p.files) : 0;
  return int(std::min<uint64_t>(1000, p.bytes_done * 1000 / p.bytes));
}

}  // namespace shardscope::viewer
