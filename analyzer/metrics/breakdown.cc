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
  // Grouped in place, as merge() does.
  size_t n = 0;
  int64_t running_end = 0;
  for (const Interval& i : v) {
    if (!n || i.start > running_end) {
      v[n++] = i;
      running_end = i.end;
    } else {
      v[n - 1].end = std::max(v[n - 1].end, i.end);
      running_end = std::max(running_end, i.end);
    }
  }
  v.resize(n);
  return HtaSet{std::move(v)};
}

// Each device event's interval as `as` makes it, by class: all of them, computation, communication (the
// arrays sized first: doubling them held up to twice their room at once).
struct ClassSets {
  std::vector<Interval> all, comp, comm;
};
template <class Make, class Keep, class Cls>
ClassSets class_sets(const model::Rank& rank, Keep keep, Cls cls, Make as) {
  size_t n[3] = {0, 0, 0};
  for (const model::Track& t : rank.tracks)
    for (const model::Event& e : t.events)
      if (keep(t, e)) {
        ++n[0];
        const model::IntervalClass c = cls(e);
        n[1] += c == model::IntervalClass::Compute, n[2] += c == model::IntervalClass::Communication;
      }
  ClassSets s;
  s.all.reserve(n[0]), s.comp.reserve(n[1]), s.comm.reserve(n[2]);
  for (const model::Track& t : rank.tracks)
    for (const model::Event& e : t.events)
      if (keep(t, e)) {
        const Interval i = as(e);
        s.all.push_back(i);
        const model::IntervalClass c = cls(e);
        if (c == model::IntervalClass::Compute) s.comp.push_back(i);
        else if (c == model::IntervalClass::Communication)
          s.comm.push_back(i);
      }
  return s;
}

}  // namespace

DeviceSets device_sets(const model::Rank& rank) {
  ClassSets c = class_sets(
      rank, [](const model::Track&, const model::Event& e) { return e.is_device() && e.ph == 'X'; },
      [](const model::Event& e) { return e.cls; },
      [](const model::Event& e) {
        return Interval{e.ts_ns, e.end_ns()};
      });
  DeviceSets s;
  s.device_events = c.all.size();
  s.compute = merge(std::move(c.comp));
  s.comm = merge(std::move(c.comm));
  s.all = merge(std::move(c.all));
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
  size_t left_out = 0;
  // HTA reads GPU kernels only: a CPU-only rank's Gloo ranges (kineto_importer.cc) are not among them.
  auto keep = [&](const model::Track& t, const model::Event& e) {
    if ((kineto && t.kind != model::TrackKind::DeviceStream) || !e.is_device() || e.ph != 'X') return false;
    return !(e.flags & model::kOutsideHtaWindow);
  };
  for (const model::Track& t : rank.tracks)
    if (!kineto || t.kind == model::TrackKind::DeviceStream)
      for (const model::Event& e : t.events)
        left_out += e.is_device() && e.ph == 'X' && (e.flags & model::kOutsideHtaWindow);
  // On PyTorch profiler traces (the ones HTA reads) HTA takes collectives it does not know by name
  // (symmetric memory, custom all-reduce, those found by their launching op) for compute; so does the
  // breakdown compared with HTA's.
  auto cls = [&](const model::Event& e) {
    return kineto && e.cls == model::IntervalClass::Communication ? model::hta_device_class(rank.str(e.name)) : e.cls;
  };
  // In whole µs as HTA has them first, then in ns: one set of arrays at a time.
  ClassSets us = class_sets(rank, keep, cls, [](const model::Event& e) {
    return Interval{ceil_div(e.ts_ns, 1000), floor_div(e.end_ns(), 1000)};
  });
  if (us.all.empty()) return std::nullopt;
  HtaBreakdown b;
  b.device_events = us.all.size();
  b.left_out = left_out;
  {
    HtaSet all = hta_merge(std::move(us.all)), comp = hta_merge(std::move(us.comp)),
           comm = hta_merge(std::move(us.comm));
    int64_t first = all.groups.front().start, last = all.groups.front().end;
    for (const Interval& g : all.groups) last = std::max(last, g.end);
    b.window_us = last - first;
    b.busy_us = all.length();
    b.compute_us = comp.length();
    b.comm_us = comm.length();
    // HTA's overlap sweep only ever counts time where both are active: reversed groups add nothing.
    b.overlap_us = intersection_length(merge(std::move(comm.groups)), merge(std::move(comp.groups)));
  }
  if (b.window_us <= 0) return std::nullopt;
  // The same, unrounded: no reversed intervals, so the plain union serves; the window from every event,
  // zero-length ones too, as HTA's.
  ClassSets ns = class_sets(rank, keep, cls, [](const model::Event& e) { return Interval{e.ts_ns, e.end_ns()}; });
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const Interval& i : ns.all) lo = std::min(lo, i.start), hi = std::max(hi, i.end);
  b.window_ns = sat_sub(hi, lo);
  IntervalSet all_ns = merge(std::move(ns.all)), comp_ns = merge(std::move(ns.comp)),
              comm_ns = merge(std::move(ns.comm));
  b.busy_ns = length(all_ns);
  b.compute_ns = length(comp_ns);
  b.comm_ns = length(comm_ns);
  b.overlap_ns = intersection_length(comm_ns, comp_ns);
  return b;
}

}  // namespace shardscope::metrics
