// Saturating int64 arithmetic for values that come from trace files: a hostile or broken file may put times,
// durations and sizes anywhere in the int64 range, and a sum or difference of them must never wrap (undefined
// behaviour, and a total below its parts). On the model's floor so the importers and the analyzer share it.
#pragma once

#include <cstdint>
#include <limits>

namespace shardscope::model {

inline constexpr int64_t kSatMax = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kSatMin = std::numeric_limits<int64_t>::min();

// a + b, held at INT64_MAX / INT64_MIN where it would leave the range.
constexpr int64_t sat_add(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? kSatMax : kSatMin) : r;
}

// a − b, held at INT64_MAX / INT64_MIN where it would leave the range.
constexpr int64_t sat_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? kSatMax : kSatMin) : r;
}

// a × b, held at INT64_MAX / INT64_MIN where it would leave the range.
constexpr int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? kSatMin : kSatMax) : r;
}

// a − b within [−INT64_MAX, INT64_MAX]: a difference that may later be negated (shown as "x after y").
constexpr int64_t sat_diff(int64_t a, int64_t b) {
  const int64_t d = sat_sub(a, b);
  return d == kSatMin ? -kSatMax : d;
}

// −a, with −INT64_MIN held at INT64_MAX.
constexpr int64_t sat_neg(int64_t a) { return a == kSatMin ? kSatMax : -a; }

}  // namespace shardscope::model
