// One trace event as the file holds it: Chrome Trace Event fields with times in integer nanoseconds.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace shardscope::trace {

struct Event {
  char ph = 'X';  // X complete, i instant, C counter, M metadata, B/E, b/e async, s/t/f flow
  std::string name;
  std::string cat;
  int64_t pid = 0;  // rank
  int64_t tid = 0;  // track
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;   // X events only
  std::string id;       // async and flow events; empty when absent
  nlohmann::json args;  // an object, or null when the event has none

  bool operator==(const Event&) const = default;
};

}  // namespace shardscope::trace
