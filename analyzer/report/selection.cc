#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "analyzer/analysis/run_summary.h"
#include "analyzer/report/render.h"

namespace shardscope::report {
namespace {

// At most this many numbers in one --ranks or --steps list: a range wider than any run (0-9223372036854775807)
// is refused rather than expanded into gigabytes.
constexpr uint64_t kMaxListed = 1'000'000;

// "0,2,5-7" as the numbers it names.
template <class T>
std::vector<T> parse_list(const std::string& what, const std::string& arg) {
  std::vector<T> out;
  const std::string shown = arg.substr(0, 60);
  auto usage = [&] {
    return std::invalid_argument(
        fmt::format("{} '{}': give all, worst, worst:N or numbers and ranges like 0,2,5-7", what, shown));
  };
  size_t at = 0;
  while (at <= arg.size()) {
    const size_t comma = std::min(arg.find(',', at), arg.size());
    const std::string item = arg.substr(at, comma - at);
    const size_t dash = item.find('-', 1);
    T lo{}, hi{};
    auto num = [&](std::string_view s, T& v) {
      if (s.empty()) return false;
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ptr != s.data() + s.size()) return false;
      if (ec == std::errc::result_out_of_range)
        throw std::invalid_argument(fmt::format("{} '{}': {} is out of range ({} to {})", what, shown, s.substr(0, 40),
                                                std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
      return ec == std::errc();
    };
    const bool ok = dash == std::string::npos ? num(item, lo) && (hi = lo, true)
                                              : num(std::string_view(item).substr(0, dash), lo) &&
                                                    num(std::string_view(item).substr(dash + 1), hi);
    if (!ok || hi < lo) throw usage();
    // hi - lo + 1 in unsigned arithmetic: it fits uint64_t for every T here, where the signed difference may not.
    const uint64_t count = uint64_t(hi) - uint64_t(lo) + 1;
    if (count == 0 || count > kMaxListed - std::min<uint64_t>(out.size(), kMaxListed))
      throw std::invalid_argument(
          fmt::format("{} '{}': names more than {} numbers; give a narrower range", what, shown, kMaxListed));
    for (uint64_t k = 0; k < count; ++k) out.push_back(T(uint64_t(lo) + k));
    at = comma + 1;
  }
  return out;
}

}  // namespace

Selection parse_selection(const std::string& ranks, const std::string& steps) {
  Selection s;
  if (ranks == "all") s.ranks = Selection::Ranks::All;
  else if (ranks.empty() || ranks == "worst")
    s.ranks = Selection::Ranks::Worst;
  else if (ranks.rfind("worst:", 0) == 0) {
    std::vector<size_t> n = parse_list<size_t>("--ranks", ranks.substr(6));
    if (n.size() != 1 || n[0] == 0)
      throw std::invalid_argument(
          fmt::format("--ranks '{}': worst:N takes one number, 1 or more", ranks.substr(0, 60)));
    s.worst = n[0];
  } else {
    s.ranks = Selection::Ranks::List;
    s.list = parse_list<int>("--ranks", ranks);
  }
  if (!steps.empty()) s.bounded = false;
  if (!steps.empty() && steps != "all") s.steps = parse_list<int64_t>("--steps", steps);
  return s;
}

std::vector<int> selected_ranks(const Report& r, const Selection& sel, const std::vector<int>* worst_first) {
  std::set<int> in_run;
  for (const RankReport& rr : r.ranks) in_run.insert(rr.rank);
  std::set<int> shown;
  if (sel.ranks == Selection::Ranks::All) shown = in_run;
  else if (sel.ranks == Selection::Ranks::List) {
    for (int k : sel.list) {
      if (!in_run.count(k))
        throw std::invalid_argument(fmt::format("--ranks: rank {} is not in this run (its ranks: {})", k,
                                                analysis::rank_ranges(std::vector<int>(in_run.begin(), in_run.end()))));
      shown.insert(k);
    }
  } else {
    const std::vector<int> order = worst_first ? *worst_first : analysis::summarize_run(r).by_exposed;
    for (size_t i = 0; i < order.size() && i < sel.worst; ++i) shown.insert(order[i]);
  }
  return {shown.begin(), shown.end()};
}

std::vector<int64_t> selected_steps(const RankReport& rr, const Selection& sel) {
  std::vector<int64_t> out;
  if (!sel.steps.empty()) {
    for (const StepRow& s : rr.steps)
      if (std::find(sel.steps.begin(), sel.steps.end(), s.step.number) != sel.steps.end()) out.push_back(s.step.number);
    // Prefetch steps the tables lack (a step with no device activity) are still named.
    for (const metrics::StepPrefetch& s : rr.prefetch.steps)
      if (std::find(sel.steps.begin(), sel.steps.end(), s.step) != sel.steps.end()) out.push_back(s.step);
  } else {
    std::vector<const StepRow*> by_time;
    for (const StepRow& s : rr.steps) by_time.push_back(&s);
    if (sel.bounded && by_time.size() > sel.max_steps) {
      // Steady steps first (not aborted, not the job's warm-up step), then by time.
      auto steady = [&](const StepRow* s) {
        return !s->step.aborted &&
               !model::is_warm_up(rr.steps.front().step.number, size_t(s - rr.steps.data()), rr.steps.size());
      };
      std::stable_sort(by_time.begin(), by_time.end(), [&](const StepRow* a, const StepRow* b) {
        return steady(a) != steady(b) ? steady(a) : a->m.window_ns > b->m.window_ns;
      });
      by_time.resize(sel.max_steps);
    }
    for (const StepRow* s : by_time) out.push_back(s->step.number);
    // Without per-step rows, the prefetch steps are the steps (bounded the same way, first ones first).
    if (rr.steps.empty())
      for (const metrics::StepPrefetch& s : rr.prefetch.steps)
        if (!sel.bounded || out.size() < sel.max_steps) out.push_back(s.step);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string steps_left_out(const RankReport& rr, const std::vector<int64_t>& shown, const Selection& sel) {
  std::set<int64_t> all;
  for (const StepRow& s : rr.steps) all.insert(s.step.number);
  for (const metrics::StepPrefetch& s : rr.prefetch.steps) all.insert(s.step);
  // Steps listed with --steps are what was asked for: nothing to say.
  if (!sel.steps.empty() || all.size() <= shown.size()) return "";
  const size_t more = all.size() - shown.size();
  const std::string range = fmt::format("{}-{}", *all.begin(), *all.rbegin());
  return fmt::format("the {} slowest of {} steps; {} more: --steps all or a list like {}", shown.size(), all.size(),
                     more, range);
}

}  // namespace shardscope::report
