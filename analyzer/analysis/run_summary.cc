#include "analyzer/analysis/run_summary.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace shardscope::analysis {
namespace {

// The value at quantile q of sorted values (nearest rank).
template <class T>
T quantile(const std::vector<T>& sorted, double q) {
  size_t i = size_t(q * double(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

std::optional<AcrossRanks> across(std::vector<std::pair<double, int>> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  AcrossRanks a;
  a.min = v.front().first, a.min_rank = v.front().second;
  a.max = v.back().first, a.max_rank = v.back().second;
  a.median = v.size() % 2 ? v[v.size() / 2].first : (v[v.size() / 2 - 1].first + v[v.size() / 2].first) / 2;
  a.ranks = v.size();
  return a;
}

// Steady: completed, and not the first (warm-up) step when the rank has more than one.
bool steady(const report::RankReport& rr, size_t i) {
  return !rr.steps[i].step.aborted && (i > 0 || rr.steps.size() == 1);
}

}  // namespace

std::string rank_ranges(std::vector<int> ranks, size_t max_ranges) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  size_t listed = 0;
  for (size_t i = 0; i < ranks.size();) {
    if (listed == max_ranges) return out + fmt::format(" and {} more", ranks.size() - i);
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + (j == i ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]));
    ++listed;
    i = j + 1;
  }
  return out;
}

RunSummary summarize_run(const report::Report& r) {
  RunSummary s;
  s.ranks = r.ranks.size();
  std::vector<std::pair<int64_t, std::pair<int, int64_t>>> times;  // (step time, (rank, step))
  std::vector<std::pair<double, int>> comm, exposed, overlap;
  std::map<std::string, RunSummary::Missing> missing;  // by part
  auto miss = [&](const std::string& part, int rank, auto set) {
    auto [it, fresh] = missing.emplace(part, RunSummary::Missing{});
    it->second.part = part;
    it->second.ranks.push_back(rank);
    if (fresh) set(it->second);
  };
  std::map<metrics::Cause, std::pair<std::vector<int>, std::vector<int>>> cause_where;  // units, ranks
  std::map<metrics::Cause, size_t> cause_steps;
  for (const report::RankReport& rr : r.ranks) {
    s.steps = std::max(s.steps, rr.steps.size());
    metrics::WindowMetrics steady_sum;
    size_t steady_n = 0;
    for (size_t i = 0; i < rr.steps.size(); ++i) {
      if (!steady(rr, i)) continue;
      ++steady_n;
      steady_sum += rr.steps[i].m;
      times.push_back({rr.steps[i].m.window_ns, {rr.rank, rr.steps[i].step.number}});
    }
    s.steady_steps = std::max(s.steady_steps, steady_n);
    if (steady_n) {
      if (auto v = steady_sum.comm_fraction_pct()) comm.push_back({*v, rr.rank});
      if (auto v = steady_sum.exposed_fraction_pct()) exposed.push_back({*v, rr.rank});
      if (auto v = steady_sum.overlap_pct()) overlap.push_back({*v, rr.rank});
    } else {
      if (rr.steps_na != Na::None) miss("steps", rr.rank, [&](RunSummary::Missing& m) { m.na = rr.steps_na; });
      if (rr.whole) {
        s.comm_from_whole_trace = true;
        const metrics::HtaBreakdown& w = *rr.whole;
        if (w.window_us > 0) {
          // Whole microseconds, rounded as HTA does, can leave a zero-length event's time below zero.
          comm.push_back({100.0 * double(std::max<int64_t>(0, w.comm_us)) / double(w.window_us), rr.rank});
          exposed.push_back(
              {100.0 * double(std::max<int64_t>(0, w.comm_us - w.overlap_us)) / double(w.window_us), rr.rank});
        }
        if (auto v = w.overlap_pct()) overlap.push_back({*v, rr.rank});
      } else {
        miss("whole trace", rr.rank, [&](RunSummary::Missing& m) { m.na = rr.whole_na; });
      }
    }
    // Prefetch.
    const metrics::RankPrefetch& p = rr.prefetch;
    if (p.na != metrics::NotApplicable::None) {
      miss("prefetch", rr.rank, [&](RunSummary::Missing& m) { m.prefetch_na = p.na; });
    } else if (p.verdict != metrics::Verdict::NotApplicable) {
      ++s.prefetch_ranks;
      s.prefetch_ranks_effective += p.verdict == metrics::Verdict::Effective;
      for (const metrics::StepPrefetch& st : p.steps) {
        if (st.warm_up || st.aborted || st.verdict == metrics::Verdict::NotApplicable) continue;
        ++s.prefetch_steps;
        s.prefetch_steps_effective += st.verdict == metrics::Verdict::Effective;
        if (st.verdict != metrics::Verdict::NotEffective || st.cause == metrics::Cause::None) continue;
        ++cause_steps[st.cause];
        auto& [units, ranks] = cause_where[st.cause];
        ranks.push_back(rr.rank);
        for (const metrics::UnitPrefetch& u : st.units)
          if (u.cause == st.cause) units.push_back(u.unit);
      }
    }
    // Memory.
    bool compared = false;
    for (const metrics::MemoryRow& row : rr.memory.rows) {
      if (!row.measured || !row.predicted || *row.predicted <= 0) continue;
      compared = true;
      const double off = std::abs(*row.measured - *row.predicted) / *row.predicted;
      const double best =
          s.departs_most ? std::abs(s.departs_most->measured - s.departs_most->predicted) / s.departs_most->predicted
                         : -1;
      if (off > best) s.departs_most = RunSummary::Departure{rr.rank, row.category, *row.measured, *row.predicted};
    }
    if (compared) {
      ++s.memory_ranks;
      s.memory_ranks_agree += rr.memory.all_agree;
    } else {
      miss("memory", rr.rank, [](RunSummary::Missing&) {});
    }
  }
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    s.step_time = StepTimes{quantile(times, 0.5).first, quantile(times, 0.9).first, times.back().first,
                            times.back().second.first,  times.back().second.second, times.size()};
  }
  s.comm_pct = across(comm);
  s.exposed_pct = across(exposed);
  s.overlap_pct = across(overlap);
  {
    std::map<int, double> exp;
    for (auto& [v, rank] : exposed) exp[rank] = v;
    for (const report::RankReport& rr : r.ranks) s.by_exposed.push_back(rr.rank);
    // Most exposed first; ranks without the figure last, in rank order.
    std::stable_sort(s.by_exposed.begin(), s.by_exposed.end(), [&](int a, int b) {
      const bool ha = exp.count(a), hb = exp.count(b);
      return ha != hb ? ha : ha && exp[a] > exp[b];
    });
    if (!s.by_exposed.empty()) s.worst_rank = s.by_exposed.front();
    std::vector<std::pair<std::tuple<int, double>, int>> pf;  // ((verdict order, hidden share), rank)
    for (const report::RankReport& rr : r.ranks) {
      const metrics::RankPrefetch& p = rr.prefetch;
      const int order = p.verdict == metrics::Verdict::NotEffective ? 0
                        : p.verdict == metrics::Verdict::Effective  ? 1
                                                                    : 2;
      pf.push_back({{order, p.steady_hidden_share()}, rr.rank});
    }
    std::stable_sort(pf.begin(), pf.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [key, rank] : pf) s.by_prefetch.push_back(rank);
  }
  s.prefetch = r.prefetch_verdict;
  for (auto& [cause, n] : cause_steps)
    if (n > s.common_cause_steps) {
      s.common_cause = cause, s.common_cause_steps = n;
      s.cause_units = cause_where[cause].first, s.cause_ranks = cause_where[cause].second;
    }
  for (std::vector<int>* v : {&s.cause_units, &s.cause_ranks}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  // The links, and the ranks' waiting.
  for (const metrics::LinkStats& l : r.links) s.links.push_back({l.kind, l.busbw_gbps(), l.algbw_gbps()});
  std::vector<double> waits;
  for (const report::RankReport& rr : r.ranks)
    for (const metrics::CollectiveStats& c : rr.collectives)
      if (auto w = c.wait_pct()) waits.push_back(*w);
  if (!waits.empty()) {
    std::sort(waits.begin(), waits.end());
    s.median_wait_pct = waits[(waits.size() - 1) / 2];
  }
  // The straggler: most often last; its lateness is the median over the instances it was last at.
  const metrics::Stragglers& st = r.stragglers;
  if (st.not_applicable != metrics::StragglersNa::None) {
    RunSummary::Missing m;
    m.part = "stragglers", m.stragglers_na = st.not_applicable;
    missing.emplace("stragglers", m);
  } else {
    const metrics::StragglerRank* most = nullptr;
    for (const metrics::StragglerRank& sr : st.ranks)
      if (!most || sr.times_last > most->times_last) most = &sr;
    if (most && most->times_last > 0) {
      std::vector<int64_t> late;
      for (const metrics::StragglerInstance& in : st.instances)
        if (in.last_rank == most->rank) late.push_back(in.late_by_ns);
      std::sort(late.begin(), late.end());
      s.straggler = RunSummary::Straggler{most->rank, most->times_last, st.instances.size(),
                                          late.empty() ? 0 : quantile(late, 0.5)};
    }
  }
  for (auto& [part, m] : missing) s.missing.push_back(std::move(m));
  return s;
}

}  // namespace shardscope::analysis
