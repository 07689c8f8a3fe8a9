#include "model/steps.h"

#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace shardscope::model {

struct StepPattern::Impl {
  explicit Impl(const std::string& p) : re(p, RE2::Quiet) {}
  RE2 re;
};

StepPattern::StepPattern(const std::string& pattern) : impl_(std::make_unique<Impl>(pattern)) {
  if (!impl_->re.ok()) throw std::invalid_argument(impl_->re.error());
}
StepPattern::~StepPattern() = default;
StepPattern::StepPattern(StepPattern&&) noexcept = default;
StepPattern& StepPattern::operator=(StepPattern&&) noexcept = default;

bool StepPattern::match(std::string_view name, int64_t& number) const {
  number = -1;
  const RE2& re = impl_->re;
  re2::StringPiece text(name.data(), name.size());
  if (re.NumberOfCapturingGroups() == 0) return RE2::FullMatch(text, re);
  re2::StringPiece digits;
  if (!RE2::FullMatch(text, re, &digits)) return false;
  int64_t n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (!digits.empty() && ec == std::errc() && end == digits.data() + digits.size() && n >= 0)
    number = n;  // else numbered by position
  return true;
}

std::vector<Step> steps_matching(const Rank& rank, const StepPattern& pattern) {
  std::vector<Step> out;
  std::vector<std::pair<bool, int64_t>> by_name(rank.strings.size(), {false, -1});  // matched?, number
  for (StringId id = 0; id < rank.strings.size(); ++id) {
    int64_t n = -1;
    if (pattern.match(rank.str(id), n)) by_name[id] = {true, n};
  }
  for (const Track& t : rank.tracks)
    for (const Event& e : t.events)
      if (e.ph == 'X' && !e.is_device() && e.name < by_name.size() && by_name[e.name].first)
        out.push_back({by_name[e.name].second, e.ts_ns, e.end_ns(), e.ts_ns, e.end_ns()});
  std::sort(out.begin(), out.end(), [](const Step& a, const Step& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  });
  std::vector<Step> outer;
  for (const Step& s : out)
    if (outer.empty() || s.start_ns >= outer.back().end_ns) outer.push_back(s);
  for (size_t i = 0; i < outer.size(); ++i)
    if (outer[i].number < 0) outer[i].number = int64_t(i);
  return outer;
}

namespace {

// The rank's host ranges whose name `is` says, outermost only (a match that starts before the previous
// kept one ended is left out), by start: [start, end) each.
template <class Is>
std::vector<std::pair<int64_t, int64_t>> outer_ranges(const Rank& rank, Is is) {
  std::vector<char> named(rank.strings.size(), 0);
  for (StringId id = 0; id < rank.strings.size(); ++id) named[id] = is(rank.str(id));
  std::vector<std::pair<int64_t, int64_t>> all;
  for (const Track& t : rank.tracks)
    for (const Event& e : t.events)
      if (e.ph == 'X' && !e.is_device() && e.name < named.size() && named[e.name])
        all.emplace_back(e.ts_ns, e.end_ns());
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
  std::vector<std::pair<int64_t, int64_t>> outer;
  for (const auto& r : all)
    if (outer.empty() || r.first >= outer.back().second) outer.push_back(r);
  return outer;
}

// The first start and last end of the rank's host events: INT64_MAX, INT64_MIN where it has none.
std::pair<int64_t, int64_t> host_span(const Rank& rank) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const Track& t : rank.tracks)
    for (const Event& e : t.events)
      if (!e.is_device()) lo = std::min(lo, e.ts_ns), hi = std::max(hi, e.end_ns());
  return {lo, hi};
}

Step step(int64_t number, int64_t start, int64_t end) { return {number, start, end, start, end}; }

}  // namespace

std::vector<Step> steps_from_marker(const Rank& rank, std::string_view name) {
  const auto marks = outer_ranges(rank, [&](std::string_view n) { return n == name; });
  std::vector<Step> out;
  const int64_t last_end = host_span(rank).second;
  for (size_t i = 0; i < marks.size(); ++i) {
    const int64_t end = i + 1 < marks.size() ? marks[i + 1].first : std::max(last_end, marks[i].second);
    out.push_back(step(int64_t(i), marks[i].first, end));
  }
  return out;
}

std::vector<Step> steps_from_optimizer(const Rank& rank) {
  const auto optimizer = outer_ranges(rank, [](std::string_view n) { return n.starts_with(kOptimizerStepPrefix); });
  std::vector<Step> out;
  int64_t start = std::min(host_span(rank).first, optimizer.empty() ? INT64_MAX : optimizer.front().first);
  for (size_t i = 0; i < optimizer.size(); ++i) {
    out.push_back(step(int64_t(i), start, optimizer[i].second));
    start = optimizer[i].second;
  }
  return out;
}

namespace {

// A collective by issue: when the host issued it (its start where the trace does not say), what it is.
struct Issued {
  int64_t at;
  CollectiveKind kind;
  int64_t bytes;
  bool operator==(const Issued& o) const { return kind == o.kind && bytes == o.bytes; }
};

// The smallest period of s (s[i] == s[i + p] for every i): s.size() − the longest border (KMP's prefix
// function), in time linear in s.
size_t smallest_period(const std::vector<Issued>& s) {
  std::vector<size_t> border(s.size(), 0);
  for (size_t i = 1; i < s.size(); ++i) {
    size_t k = border[i - 1];
    while (k > 0 && !(s[i] == s[k])) k = border[k - 1];
    border[i] = k + (s[i] == s[k] ? 1 : 0);
  }
  return s.empty() ? 0 : s.size() - border.back();
}

// Where a repetition of the period [0, p) begins: the start of its longest cyclic run of all-gathers or
// all-reduces (the earliest of equal runs); p when the period holds neither.
size_t repetition_start(const std::vector<Issued>& s, size_t p) {
  size_t best = p, best_len = 0;
  for (size_t k = 0; k < p; ++k) {
    const CollectiveKind c = s[k].kind;
    if (c != CollectiveKind::AllGather && c != CollectiveKind::AllReduce) continue;
    size_t len = 1;
    while (len < p && s[(k + len) % p].kind == c) ++len;
    if (len < p && s[(k + p - 1) % p].kind == c) continue;  // inside a run that starts before it
    if (len > best_len) best = k, best_len = len;
  }
  return best;
}

}  // namespace

std::vector<Step> steps_from_collectives(const Rank& rank) {
  std::vector<Issued> s;
  for (const Track& t : rank.tracks)
    for (const Event& e : t.events)
      if (e.cls == IntervalClass::Communication && e.coll != CollectiveKind::None)
        s.push_back({e.issued_or_start_ns(), e.coll, e.bytes});
  std::stable_sort(s.begin(), s.end(), [](const Issued& a, const Issued& b) { return a.at < b.at; });
  const size_t p = smallest_period(s);
  if (p == 0 || s.size() < 2 * p) return {};
  const size_t k = repetition_start(s, p);
  if (k == p || s.size() - k < 2 * p) return {};
  // The last whole repetition runs to the rank's last event, host or device: a collective whose launch the
  // trace does not give is placed at its own start, which may be after the host's last event.
  int64_t last_end = INT64_MIN;
  for (const Track& t : rank.tracks)
    for (const Event& e : t.events) last_end = std::max(last_end, e.end_ns());
  std::vector<Step> out;
  for (size_t i = k; i + p <= s.size(); i += p) {
    const int64_t end = i + p < s.size() ? s[i + p].at : std::max(last_end, s.back().at);
    out.push_back(step(int64_t(out.size()), s[i].at, end));
  }
  return out;
}

void set_steps(Rank& r, std::vector<Step> steps, bool device_windows) {
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.host_start_ns < b.host_start_ns; });
  r.steps = std::move(steps);
  for (Track& t : r.tracks)
    for (Event& e : t.events) {
      if (!e.is_device()) continue;
      e.step = -1;
      const int64_t at = e.issued_or_start_ns();
      auto it = std::upper_bound(r.steps.begin(), r.steps.end(), at,
                                 [](int64_t x, const Step& s) { return x < s.host_start_ns; });
      if (it != r.steps.begin() && at < std::prev(it)->host_end_ns) e.step = int32_t(std::prev(it) - r.steps.begin());
    }
  if (!device_windows) return;
  std::vector<int64_t> lo(r.steps.size(), INT64_MAX), hi(r.steps.size(), INT64_MIN);
  for (const Track& t : r.tracks)
    for (const Event& e : t.events)
      if (e.is_device() && e.step >= 0) {
        lo[size_t(e.step)] = std::min(lo[size_t(e.step)], e.ts_ns);
        hi[size_t(e.step)] = std::max(hi[size_t(e.step)], e.end_ns());
      }
  set_device_windows(r.steps, lo, hi);
}

void set_device_windows(std::vector<Step>& steps, const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (lo[i] == INT64_MAX) {
      steps[i].start_ns = steps[i].host_start_ns, steps[i].end_ns = steps[i].host_end_ns;
      continue;
    }
    steps[i].start_ns = lo[i];
    steps[i].end_ns = hi[i];
    if (i + 1 < steps.size() && lo[i + 1] != INT64_MAX && lo[i + 1] > lo[i]) steps[i].end_ns = lo[i + 1];
  }
}

}  // namespace shardscope::model
