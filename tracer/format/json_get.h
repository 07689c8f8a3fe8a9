// Reading a trace's metadata (run_config, headers) without trusting its types: a field of an unexpected
// type reads as absent instead of throwing, so one odd field cannot take a whole report down.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace shardscope::trace {

inline const nlohmann::json* json_field(const nlohmann::json& o, const char* key) {
  if (!o.is_object()) return nullptr;
  auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}
inline std::optional<double> json_number(const nlohmann::json& o, const char* key) {
  const nlohmann::json* v = json_field(o, key);
  if (!v || !v->is_number()) return std::nullopt;
  return v->get<double>();
}
// An integer field: a JSON integer within int64, or a whole-valued float within it. Anything else reads as
// absent, since converting a double beyond int64's range is undefined behaviour, not a wrap.
inline std::optional<int64_t> json_int64(const nlohmann::json& o, const char* key) {
  const nlohmann::json* v = json_field(o, key);
  if (!v) return std::nullopt;
  if (v->is_number_unsigned()) {
    if (v->get<uint64_t>() > uint64_t(INT64_MAX)) return std::nullopt;
    return int64_t(v->get<uint64_t>());
  }
  if (v->is_number_integer()) return v->get<int64_t>();
  if (!v->is_number_float()) return std::nullopt;
  const double d = v->get<double>();
  // 9.2e18 is the largest double below 2^63, so every value that passes converts exactly.
  if (!(d >= -9.2e18 && d <= 9.2e18)) return std::nullopt;
  return int64_t(d);
}
// An integer field within [lo, hi], else absent.
inline std::optional<int64_t> json_int_in(const nlohmann::json& o, const char* key, int64_t lo, int64_t hi) {
  std::optional<int64_t> v = json_int64(o, key);
  if (!v || *v < lo || *v > hi) return std::nullopt;
  return v;
}
inline std::optional<std::string> json_string(const nlohmann::json& o, const char* key) {
  const nlohmann::json* v = json_field(o, key);
  if (!v || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}
// true for `true` and for a positive number ("limit_all_gathers": 2 means the limiter is on).
inline bool json_truthy(const nlohmann::json& o, const char* key) {
  const nlohmann::json* v = json_field(o, key);
  if (!v) return false;
  if (v->is_boolean()) return v->get<bool>();
  if (v->is_number()) return v->get<double>() > 0;
  return false;
}

}  // namespace shardscope::trace
