#include "analyzer/metrics/breakdown.h"

#include <algorithm>

#include "model/classify.h"
#include "model/saturating.h"

namespace shardscope::metrics {
namespace {

// A share of a window: always within [0, 100]. HTA's µs rounding can make a set's length negative (a
// zero-length kernel at 10.3 µs is [11, 10]) and so a busy time a little past the window; a share outside
// [0, 100] is meaningless, so it is held at the bound.
std::optional<double> pct(int64_t num, int64_t den) {
  if (den <= 0) return std::nullopt;
  return std::clamp(100.0 * double(num) / double(den), 0.0, 100.0);
}

using model::sat_add;
using model::sat_sub;

// Floor and ceiling division for possibly negative ns (b > 1): no negation, which overflows on INT64_MIN.
int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t ceil_div(int64_t a, int64_t b) { return a / b + ((a % b != 0) && ((a < 0) == (b < 0))); }

// HTA's merge_kernel_intervals: sorted by start, a new group whenever start > running max of the ends, each
// group [min start, max end]. Unlike merge() it keeps the reversed intervals µs rounding creates (a 0.4 µs
// kernel at 10.3 becomes [11, 10]) and counts their negative length, exactly as HTA's sum does.
struct HtaSet {
  std::vector<Interval> groups;
  int64_t length() const {
    int64_t n = 0;
    for (const Interval& g : groups) n += g.end - g.start;
    return n;
  }
};
HtaSet hta_merge(std::vector<Interval> v) {
  std::stable_sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  HtaSet s;
  int64_t running_end = 0;
  for (const Interval& i : v) {
    if (s.groups.empty() || i.start > running_end) {
      s.groups.push_back(i);
      running_end = i.end;
    } else {
      s.groups.back().end = std::max(s.groups.back().end, i.end);
      running_end = std::max(running_end, i.end);
    }
  }
  return s;
}

}  // namespace

DeviceSets device_sets(const model::Rank& rank) {
  std::vector<Interval> c, m, a;
  DeviceSets s;
  for (const model::Track& t : rank.tracks)
    for (const model::Event& e : t.events) {
      if (!e.is_device() || e.ph != 'X') continue;
      ++s.device_events;
      Interval i{e.ts_ns, e.end_ns()};
      a.push_back(i);
      if (e.cls == model::IntervalClass::Compute) c.push_back(i);
      else if (e.cls == model::IntervalClass::Communication)
        m.push_back(i);
    }
  s.compute = merge(std::move(c));
  s.comm = merge(std::move(m));
  s.all = merge(std::move(a));
  return s;
}

std::optional<double> WindowMetrics::overlap_pct() const { return pct(overlap_ns, comm_ns); }
std::optional<double> WindowMetrics::comm_fraction_pct() const { return pct(comm_ns, window_ns); }
std::optional<double> WindowMetrics::exposed_fraction_pct() const { return pct(exposed_ns(), window_ns); }
std::optional<double> WindowMetrics::idle_pct() const { return pct(idle_ns(), window_ns); }
std::optional<double> WindowMetrics::compute_pct() const { return pct(compute_ns, window_ns); }

// Saturating: steps of a hostile file may each span most of the int64 range.
WindowMetrics& WindowMetrics::operator+=(const WindowMetrics& o) {
  window_ns = sat_add(window_ns, o.window_ns);
  compute_ns = sat_add(compute_ns, o.compute_ns);
  comm_ns = sat_add(comm_ns, o.comm_ns);
  overlap_ns = sat_add(overlap_ns, o.overlap_ns);
  busy_ns = sat_add(busy_ns, o.busy_ns);
  return *this;
}

WindowMetrics measure(const DeviceSets& s, int64_t lo, int64_t hi) {
  WindowMetrics w;
  if (hi <= lo) return w;
  w.window_ns = sat_sub(hi, lo);
  IntervalSet c = clip(s.compute, lo, hi), m = clip(s.comm, lo, hi);
  w.compute_ns = length(c);
  w.comm_ns = length(m);
  w.overlap_ns = intersection_length(m, c);
  w.busy_ns = length_within(s.all, lo, hi);
  return w;
}

OutsideSteps outside_steps(const model::Rank& rank, const DeviceSets& sets) {
  OutsideSteps o;
  if (rank.steps.empty()) return o;
  const model::Step& first = rank.steps.front();
  const model::Step* last = &rank.steps.front();
  for (const model::Step& s : rank.steps)
    if (s.end_ns > last->end_ns) last = &s;
  o.first_step = first.number;
  o.last_step = last->number;
  for (const model::Track& t : rank.tracks)
    for (const model::Event& e : t.events) {
      if (!e.is_device() || e.ph != 'X') continue;
      if (e.ts_ns < first.start_ns) ++o.before_events;
      else if (e.ts_ns >= last->end_ns)
        ++o.after_events;
    }
  o.before_ns = length_within(sets.all, INT64_MIN, first.start_ns);
  o.after_ns = length_within(sets.all, last->end_ns, INT64_MAX);
  return o;
}

std::optional<double> HtaBreakdown::overlap_pct() const { return pct(overlap_us, comm_us); }
double HtaBreakdown::idle_pct() const { return *pct(window_us - busy_us, window_us); }
double HtaBreakdown::compute_pct() const { return *pct(compute_us, window_us); }
double HtaBreakdown::non_compute_pct() const { return *pct(busy_us - compute_us, window_us); }

WindowMetrics HtaBreakdown::exact() const {
  WindowMetrics w;
  w.window_ns = window_ns, w.busy_ns = busy_ns, w.compute_ns = compute_ns, w.comm_ns = comm_ns,
  w.overlap_ns = overlap_ns;
  return w;
}
std::optional<double> HtaBreakdown::exact_non_compute_pct() const {
  return pct(sat_sub(busy_ns, compute_ns), window_ns);
}

std::optional<HtaBreakdown> hta_breakdown(const model::Rank& rank) {
  const bool kineto = rank.format == "kineto";
  std::vector<Interval> c, m, a, cn, mn, an;  // in whole µs as HTA has them; in ns
  size_t left_out = 0;
  for (const model::Track& t : rank.tracks) {
    // HTA reads GPU kernels only: a CPU-only rank's Gloo ranges (kineto_importer.cc) are not among them.
    if (kineto && t.kind != model::TrackKind::DeviceStream) continue;
    for (const model::Event& e : t.events) {
      if (!e.is_device() || e.ph != 'X') continue;
      if (e.flags & model::kOutsideHtaWindow) {
        ++left_out;
        continue;
      }
      Interval i{ceil_div(e.ts_ns, 1000), floor_div(e.end_ns(), 1000)}, exact{e.ts_ns, e.end_ns()};
      a.push_back(i);
      an.push_back(exact);
      // On PyTorch profiler traces (the ones HTA reads) HTA takes collectives it does not know by name
      // (symmetric memory, custom all-reduce, those found by their launching op) for compute; so does the
      // breakdown compared with HTA's.
      model::IntervalClass cls = e.cls;
      if (kineto && cls == model::IntervalClass::Communication) cls = model::hta_device_class(rank.str(e.name));
      if (cls == model::IntervalClass::Compute) c.push_back(i), cn.push_back(exact);
      else if (cls == model::IntervalClass::Communication)
        m.push_back(i), mn.push_back(exact);
    }
  }
  if (a.empty()) return std::nullopt;
  HtaBreakdown b;
  b.device_events = a.size();
  b.left_out = left_out;
  HtaSet all = hta_merge(std::move(a)), comp = hta_merge(std::move(c)), comm = hta_merge(std::move(m));
  int64_t first = all.groups.front().start, last = all.groups.front().end;
  for (const Interval& g : all.groups) last = std::max(last, g.end);
  b.window_us = last - first;
  b.busy_us = all.length();
  b.compute_us = comp.length();
  b.comm_us = comm.length();
  // HTA's overlap sweep only ever counts time where both are active: reversed groups add nothing.
  b.overlap_us = intersection_length(merge(comm.groups), merge(comp.groups));
  if (b.window_us <= 0) return std::nullopt;
  // The same, unrounded: no reversed intervals, so the plain union serves; the window from every event,
  // zero-length ones too, as HTA's.
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const Interval& i : an) lo = std::min(lo, i.start), hi = std::max(hi, i.end);
  b.window_ns = sat_sub(hi, lo);
  IntervalSet all_ns = merge(std::move(an)), comp_ns = merge(std::move(cn)), comm_ns = merge(std::move(mn));
  b.busy_ns = length(all_ns);
  b.compute_ns = length(comp_ns);
  b.comm_ns = length(comm_ns);
  b.overlap_ns = intersection_length(comm_ns, comp_ns);
  return b;
}

}  // namespace shardscope::metrics
