// What a counter row shows beside its area chart: the unit read off the counter's name, the y axis's
// bottom and top, and the value the step function holds at a time (what the hover tooltip says).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/trace.h"

namespace shardscope::viewer {

// The trace gives a counter a name and numbers, no unit: memory counters (PyTorch's allocator, the trainer's
// memory.* series, Kineto's "Total Allocated") are bytes; anything else is a plain count.
enum class CounterUnit : uint8_t { Count, Bytes };
CounterUnit counter_unit(std::string_view name);
std::string_view to_string(CounterUnit u);  // "bytes", "count"

// "1.50 GiB", "256 KiB", "12 B" for bytes; "1234", "0.5", "1.2e+07" for counts.
std::string format_counter(double value, CounterUnit unit);

// The y axis: the chart is drawn from min (0 unless a sample is negative) to max (the peak; 1 when no sample
// is positive, so an all-zero series has an axis).
struct CounterAxis {
  double min = 0, max = 1;
};
CounterAxis counter_axis(const model::CounterSeries& series);

// The value at `ns`: the last sample at or before it (a counter holds until its next sample); none before
// the first sample.
std::optional<double> counter_value_at(const model::CounterSeries& series, double ns);

}  // namespace shardscope::viewer
