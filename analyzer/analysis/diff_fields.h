// The rows `diff` shows for a window's breakdown, declared once beside the summary's field lists
// (summary_fields.h): each row names the stored fields it reads, and a compile-time check holds every field a
// summary carries to a row that shows it or to a list of fields left out of the diff on purpose. A field added
// to WindowMetrics or HtaBreakdown and carried by summaries therefore fails the build until the diff says what
// it does with it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>

#include "analyzer/analysis/na.h"
#include "analyzer/analysis/summary_fields.h"
#include "analyzer/metrics/breakdown.h"

namespace shardscope::analysis {

template <class T>
struct DiffQuantity {
  const char* label;
  std::optional<double> (*value)(const T&);
  std::array<int64_t T::*, 2> reads;  // the stored fields it is made of (unused slots null)
  Na na_when_empty = Na::None;        // the reason when T is there and the value is not (a share of nothing)
};

// DiffFields<T>::rows, and DiffFields<T>::not_shown: a tuple of the carried fields the diff leaves out.
template <class T>
struct DiffFields;

// Per-step means: the diff divides a WindowMetrics row by the completed steps.
template <>
struct DiffFields<metrics::WindowMetrics> {
  using W = metrics::WindowMetrics;
  static constexpr DiffQuantity<W> rows[] = {
      {"mean step time ms", [](const W& m) -> std::optional<double> { return double(m.window_ns); }, {&W::window_ns}},
      {"mean compute ms / step",
       [](const W& m) -> std::optional<double> { return double(m.compute_ns); },
       {&W::compute_ns}},
      {"mean communication ms / step",
       [](const W& m) -> std::optional<double> { return double(m.comm_ns); },
       {&W::comm_ns}},
      {"mean exposed comm ms / step",
       [](const W& m) -> std::optional<double> { return double(m.exposed_ns()); },
       {&W::comm_ns, &W::overlap_ns}},
      {"mean idle ms / step",
       [](const W& m) -> std::optional<double> { return double(m.idle_ns()); },
       {&W::window_ns, &W::busy_ns}},
  };
  static constexpr std::tuple<> not_shown{};
};

// The whole trace, in the trace's own resolution (the exact figures beside the report's HTA-compatible line).
template <>
struct DiffFields<metrics::HtaBreakdown> {
  using H = metrics::HtaBreakdown;
  static constexpr DiffQuantity<H> rows[] = {
      {"whole-trace window ms", [](const H& w) -> std::optional<double> { return w.window_ns / 1e6; }, {&H::window_ns}},
      {"whole-trace overlap %",
       [](const H& w) { return w.exact().overlap_pct(); },
       {&H::overlap_ns, &H::comm_ns},
       Na::NoCommunication},
      {"whole-trace idle %", [](const H& w) { return w.exact().idle_pct(); }, {&H::busy_ns, &H::window_ns}},
      {"whole-trace compute %", [](const H& w) { return w.exact().compute_pct(); }, {&H::compute_ns, &H::window_ns}},
      {"whole-trace non-compute %",
       [](const H& w) { return w.exact_non_compute_pct(); },
       {&H::compute_ns, &H::busy_ns}},
  };
  // Counts of events, not times: the report shows them; a change in them shows in the times. The same times
  // in whole µs as HTA rounds them: the report's HTA line shows them; the diff compares the exact ones.
  static constexpr std::tuple not_shown{&H::device_events, &H::left_out, &H::window_us, &H::busy_us,
                                        &H::compute_us,    &H::comm_us,  &H::overlap_us};
};

namespace detail {

template <class A, class B>
constexpr bool same_member(A a, B b) {
  if constexpr (std::is_same_v<A, B>) return a == b;
  else
    return false;
}

}  // namespace detail

// True when every field summaries carry for T is read by a diff row or left out by name.
template <class T>
constexpr bool diff_covers_fields() {
  bool all = true;
  for_each_field<T>([&](const auto& f) {
    bool found = false;
    for (const auto& row : DiffFields<T>::rows)
      for (auto read : row.reads) found = found || (read && detail::same_member(read, f.member));
    std::apply([&](auto... left_out) { ((found = found || detail::same_member(left_out, f.member)), ...); },
               DiffFields<T>::not_shown);
    all = all && found;
  });
  return all;
}
static_assert(diff_covers_fields<metrics::WindowMetrics>());
static_assert(diff_covers_fields<metrics::HtaBreakdown>());

}  // namespace shardscope::analysis
