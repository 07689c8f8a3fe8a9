// The fixed-size record a traced thread appends on the hot path. Strings are pointers to storage that lives
// as long as the process (literals or interned names), so recording never allocates or copies text.
#pragma once

#include <cstdint>

namespace shardscope::tracer {

struct Arg {
  enum class Kind : uint8_t { Int, Double, String };
  // No default initializers: a Range carries an Arg array that must cost nothing when tracing is off.
  const char* key;
  Kind kind;
  union {
    int64_t i;
    double d;
    const char* s;
  };
  Arg() = default;
  Arg(const char* k, int64_t v) : key(k), kind(Kind::Int), i(v) {}
  Arg(const char* k, int v) : key(k), kind(Kind::Int), i(v) {}
  Arg(const char* k, uint64_t v) : key(k), kind(Kind::Int), i(int64_t(v)) {}
  Arg(const char* k, double v) : key(k), kind(Kind::Double), d(v) {}
  Arg(const char* k, const char* v) : key(k), kind(Kind::String), s(v) {}
};

inline constexpr int kMaxArgs = 4;

struct Record {
  enum class Kind : uint8_t { Complete, Instant, Counter, CounterDouble };
  int64_t ts;   // stamp() at the start (see clock.h), or ns when ns_times
  int64_t dur;  // Complete: stamp() at the end, or the duration in ns when ns_times;
                // Counter: the value (CounterDouble: the bit pattern of a double)
  const char* name;
  const char* cat;
  uint32_t track;  // 0: the recording thread's own track
  Kind kind;
  uint8_t nargs;
  bool ns_times;  // ts/dur are CLOCK_MONOTONIC ns given by the caller, not stamp() values
  Arg args[kMaxArgs];
};

}  // namespace shardscope::tracer
