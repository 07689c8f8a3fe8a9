// A table cell's number as every renderer writes it: the text, markdown and HTML tables show the same digits,
// and the JSON's percentages theirs.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyzer/report/report_keys.h"

namespace shardscope::report {

// Nanoseconds as milliseconds, three decimals.
inline std::string ms_cell(int64_t ns) { return fmt::format("{:.3f}", double(ns) / 1e6); }
// Lateness compares ranks' clocks, which may lie far apart: a sum that reached the end of int64 is said so.
inline std::string late_ms_cell(int64_t ns) { return ns == INT64_MAX ? "over 2^63 ns" : ms_cell(ns); }
// The value, two decimals, or "" for NaNotes to fill in with "n/a" and its reason.
inline std::string number_cell(const std::optional<double>& v) { return v ? fmt::format("{:.2f}", *v) : ""; }
// What a figure no real run has reads as (a hostile or broken counter's 1e308 or infinity): never hundreds of
// digits or "inf".
inline constexpr const char* kOutOfRange = "out of range";
// Bytes past an exabyte (no machine holds one) or not finite.
inline bool bytes_in_range(double bytes) { return std::isfinite(bytes) && std::fabs(bytes) <= 1e18; }
// Bytes as MB (1e6), three decimals, or kOutOfRange.
inline std::string mb_cell(double bytes) {
  return bytes_in_range(bytes) ? fmt::format("{:.3f}", bytes / 1e6) : kOutOfRange;
}
// Bytes in the unit that fits, for a sentence: "11.1 GB" from a GB on (one decimal: a GPU's memory is read in
// tenths of a GB), "6.960 MB" below, "512 B" under a kB; or kOutOfRange.
inline std::string bytes_text(double bytes) {
  if (!bytes_in_range(bytes)) return kOutOfRange;
  const double a = std::fabs(bytes);
  if (a >= 1e9) return fmt::format("{:.1f} GB", bytes / 1e9);
  if (a >= 1e6) return mb_cell(bytes) + " MB";
  if (a >= 1e3) return fmt::format("{:.1f} kB", bytes / 1e3);
  return fmt::format("{:.0f} B", bytes);
}
// The change from `predicted` to `measured`: "+50.0%" ("+50.0 %" with `spaced`), or "change out of range" when
// either is out of range or the change is past 1e12 %.
inline std::string change_pct(double measured, double predicted, bool spaced = false) {
  const double pct = 100 * (measured - predicted) / predicted;
  if (!bytes_in_range(measured) || !bytes_in_range(predicted) || !std::isfinite(pct) || std::fabs(pct) > 1e12)
    return std::string("change ") + kOutOfRange;
  return fmt::format("{:+.1f}{}", pct, spaced ? " %" : "%");
}

// A percentage in JSON: four decimals.
inline double pct_json(double pct) { return std::round(pct * 1e4) / 1e4; }
// A percentage under `key`, or null there with its reason under "na".
inline void put_pct(nlohmann::json& o, const char* key, const std::optional<double>& v, const std::string& why) {
  if (v) {
    o[key] = pct_json(*v);
  } else {
    o[key] = nullptr;
    o[report_keys::kNa][key] = why;
  }
}

}  // namespace shardscope::report
