#include "viewer/model/counter_track.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace shardscope::viewer {

namespace {
bool contains(std::string_view hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(),
                        [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  return it != hay.end();
}
}  // namespace

CounterUnit counter_unit(std::string_view name) {
  for (std::string_view w : {"memory", "bytes", "allocated", "reserved", "mem."})
    if (contains(name, w)) return CounterUnit::Bytes;
  return CounterUnit::Count;
}

std::string_view to_string(CounterUnit u) { return u == CounterUnit::Bytes ? "bytes" : "count"; }

std::string format_counter(double v, CounterUnit unit) {
  char buf[64];
  if (unit == CounterUnit::Bytes) {
    static const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double a = std::fabs(v);
    int k = 0;
    while (a >= 1024 && k < 4) a /= 1024, ++k;
    std::snprintf(buf, sizeof buf,
                  k == 0    ? "%.0f %s"
                  : a < 10  ? "%.2f %s"
                  : a < 100 ? "%.1f %s"
                            : "%.0f %s",
                  v < 0 ? -a : a, names[k]);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", v);
  }
  return buf;
}

CounterAxis counter_axis(const model::CounterSeries& series) {
  CounterAxis a{0, 0};
  for (const model::CounterSample& s : series.samples) {
    a.min = std::min(a.min, s.value);
    a.max = std::max(a.max, s.value);
  }
  if (a.max <= a.min) a.max = a.min + 1;
  return a;
}

std::optional<double> counter_value_at(const model::CounterSeries& series, double ns) {
  auto it = std::upper_bound(series.samples.begin(), series.samples.end(), ns,
                             [](double t, const model::CounterSample& s) { return t < double(s.ts_ns); });
  if (it == series.samples.begin()) return std::nullopt;
  return std::prev(it)->value;
}

}  // namespace shardscope::viewer
