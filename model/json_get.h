// Reading a trace's metadata (run_config, headers) without trusting its types: a field of an unexpected
// type reads as absent instead of throwing, so one odd field cannot take a whole report down.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace shardscope::model {

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

}  // namespace shardscope::model
