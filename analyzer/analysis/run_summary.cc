#include "analyzer/analysis/run_summary.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "model/saturating.h"

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

// Steady: completed, and not the job's warm-up step (model::is_warm_up).
bool steady(const report::RankReport& rr, size_t i) {
  return !rr.steps[i].step.aborted && !model::is_warm_up(rr.steps[0].step.number, i, rr.steps.size());
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

namespace {

// summarize_run's passes: each rank's steps, prefetch and memory as they come, then the orders, the prefetch
// cause, the links and the straggler over all of them.
class Summarizer {
 public:
  explicit Summarizer(const report::Report& r) : r_(r) { s_.ranks = r.ranks.size(); }

  RunSummary run() && {
    for (const report::RankReport& rr : r_.ranks) {
      add_steps(rr);
      add_prefetch(rr);
      add_memory(rr);
    }
    finish_steps();
    finish_orders();
    finish_prefetch();
    finish_links();
    finish_straggler();
    for (auto& [part, m] : missing_) s_.missing.push_back(std::move(m));
    return std::move(s_);
  }

 private:
  template <class Set>
  void miss(const std::string& part, int rank, Set set) {
    auto [it, fresh] = missing_.emplace(part, RunSummary::Missing{});
    it->second.part = part;
    it->second.ranks.push_back(rank);
    if (fresh) set(it->second);
  }

  void add_steps(const report::RankReport& rr) {
    s_.steps = std::max(s_.steps, rr.steps.size());
    metrics::WindowMetrics steady_sum;
    size_t steady_n = 0;
    for (size_t i = 0; i < rr.steps.size(); ++i) {
      if (!steady(rr, i)) continue;
      ++steady_n;
      steady_sum += rr.steps[i].m;
      times_.push_back({rr.steps[i].m.window_ns, {rr.rank, rr.steps[i].step.number}});
    }
    s_.steady_steps = std::max(s_.steady_steps, steady_n);
    if (steady_n) {
      steady_[rr.rank] = {steady_n, steady_sum};
      if (auto v = steady_sum.comm_fraction_pct()) comm_.push_back({*v, rr.rank});
      if (auto v = steady_sum.exposed_fraction_pct()) exposed_.push_back({*v, rr.rank});
      if (auto v = steady_sum.overlap_pct()) overlap_.push_back({*v, rr.rank});
      return;
    }
    if (rr.steps_na != Na::None) miss("steps", rr.rank, [&](RunSummary::Missing& m) { m.na = rr.steps_na; });
    if (!rr.whole) {
      miss("whole trace", rr.rank, [&](RunSummary::Missing& m) { m.na = rr.whole_na; });
      return;
    }
    s_.comm_from_whole_trace = true;
    // The exact figures, not the HTA line's whole µs (which move a short trace's shares by points).
    const metrics::WindowMetrics w = rr.whole->exact();
    if (auto v = w.comm_fraction_pct()) comm_.push_back({*v, rr.rank});
    if (auto v = w.exposed_fraction_pct()) exposed_.push_back({*v, rr.rank});
    if (auto v = w.overlap_pct()) overlap_.push_back({*v, rr.rank});
  }

  void add_prefetch(const report::RankReport& rr) {
    const metrics::RankPrefetch& p = rr.prefetch;
    if (p.na != metrics::NotApplicable::None) {
      miss("prefetch", rr.rank, [&](RunSummary::Missing& m) { m.prefetch_na = p.na; });
      return;
    }
    if (p.verdict == metrics::Verdict::NotApplicable) return;
    ++s_.prefetch_ranks;
    s_.prefetch_ranks_effective += p.verdict == metrics::Verdict::Effective;
    for (const metrics::StepPrefetch& st : p.steps) {
      if (st.warm_up || st.aborted || st.verdict == metrics::Verdict::NotApplicable) continue;
      ++s_.prefetch_steps;
      s_.prefetch_steps_effective += st.verdict == metrics::Verdict::Effective;
      if (st.verdict != metrics::Verdict::NotEffective || st.cause == metrics::Cause::None) continue;
      ++cause_steps_[st.cause];
      auto& [units, ranks] = cause_where_[st.cause];
      ranks.push_back(rr.rank);
      for (const metrics::UnitPrefetch& u : st.units)
        if (u.cause == st.cause) units.push_back(u.unit);
    }
  }

  void add_memory(const report::RankReport& rr) {
    if (const metrics::MeasuredMemory& mm = rr.memory.measured; mm.events > 0) {
      ++s_.measured_ranks;
      if (!s_.measured_peak || mm.peak_allocated > s_.measured_peak->bytes)
        s_.measured_peak = RunSummary::MeasuredPeak{rr.rank, mm.peak_allocated, mm.peak_in_step, mm.peak_step};
    }
    bool compared = false;
    for (const metrics::MemoryRow& row : rr.memory.rows) {
      if (!row.measured || !row.predicted || *row.predicted <= 0) continue;
      compared = true;
      const double off = std::abs(*row.measured - *row.predicted) / *row.predicted;
      const auto& most = s_.departs_most;
      const double best = most ? std::abs(most->measured - most->predicted) / most->predicted : -1;
      if (off > best) s_.departs_most = RunSummary::Departure{rr.rank, row.category, *row.measured, *row.predicted};
    }
    if (compared) {
      ++s_.memory_ranks;
      s_.memory_ranks_agree += rr.memory.all_agree;
    } else {
      miss("memory", rr.rank, [](RunSummary::Missing&) {});
    }
  }

  void finish_steps() {
    if (!times_.empty()) {
      std::sort(times_.begin(), times_.end());
      s_.step_time = StepTimes{quantile(times_, 0.5).first, quantile(times_, 0.9).first, times_.back().first,
                               times_.back().second.first,  times_.back().second.second, times_.size()};
    }
    s_.comm_pct = across(comm_);
    s_.exposed_pct = across(exposed_);
    s_.overlap_pct = across(overlap_);
  }

  void finish_orders() {
    std::map<int, double> exp;
    for (auto& [v, rank] : exposed_) exp[rank] = v;
    for (const report::RankReport& rr : r_.ranks) s_.by_exposed.push_back(rr.rank);
    // Most exposed first; ranks without the figure last, in rank order.
    std::stable_sort(s_.by_exposed.begin(), s_.by_exposed.end(), [&](int a, int b) {
      const bool ha = exp.count(a), hb = exp.count(b);
      return ha != hb ? ha : ha && exp[a] > exp[b];
    });
    if (!s_.by_exposed.empty()) s_.worst_rank = s_.by_exposed.front();
    if (auto it = steady_.find(s_.worst_rank); it != steady_.end())
      s_.budget = RunSummary::Budget{it->first, it->second.first, it->second.second};
    std::vector<std::pair<std::tuple<int, double>, int>> pf;  // ((verdict order, hidden share), rank)
    for (const report::RankReport& rr : r_.ranks) {
      const metrics::RankPrefetch& p = rr.prefetch;
      const int order = p.verdict == metrics::Verdict::NotEffective ? 0
                        : p.verdict == metrics::Verdict::Effective  ? 1
                                                                    : 2;
      pf.push_back({{order, p.steady_hidden_share()}, rr.rank});
    }
    std::stable_sort(pf.begin(), pf.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [key, rank] : pf) s_.by_prefetch.push_back(rank);
  }

  void finish_prefetch() {
    s_.prefetch = r_.prefetch_verdict;
    for (auto& [cause, n] : cause_steps_)
      if (n > s_.common_cause_steps) {
        s_.common_cause = cause, s_.common_cause_steps = n;
        s_.cause_units = cause_where_[cause].first, s_.cause_ranks = cause_where_[cause].second;
      }
    for (std::vector<int>* v : {&s_.cause_units, &s_.cause_ranks}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
  }

  // The links, and the ranks' waiting.
  void finish_links() {
    for (const metrics::LinkStats& l : r_.links) s_.links.push_back({l.kind, l.busbw_gbps(), l.algbw_gbps()});
    std::vector<std::pair<double, int>> waits;
    for (const report::RankReport& rr : r_.ranks) {
      double waited = 0, time = 0;
      for (const metrics::CollectiveStats& c : rr.collectives)
        if (auto w = c.wait_pct()) waited += *w * double(c.time_ns), time += double(c.time_ns);
      if (time > 0) waits.push_back({waited / time, rr.rank});
    }
    s_.wait_pct = across(std::move(waits));
  }

  // The straggler: most often last; its lateness is the median over the instances it was last at.
  void finish_straggler() {
    const metrics::Stragglers& st = r_.stragglers;
    if (st.not_applicable != metrics::StragglersNa::None) {
      RunSummary::Missing m;
      m.part = "stragglers", m.stragglers_na = st.not_applicable;
      missing_.emplace("stragglers", m);
      return;
    }
    const metrics::StragglerRank* most = nullptr;
    for (const metrics::StragglerRank& sr : st.ranks)
      if (!most || sr.times_last > most->times_last) most = &sr;
    if (!most || most->times_last <= 0) return;
    std::vector<int64_t> late, others_spread, others_late;
    for (const metrics::StragglerInstance& in : st.instances) {
      (in.last_rank == most->rank ? late : others_late).push_back(in.late_by_ns);
      others_spread.push_back(model::sat_sub(in.spread_ns, in.late_by_ns));  // next-latest minus earliest
    }
    const auto median = [](std::vector<int64_t>& v) -> int64_t {
      if (v.empty()) return 0;
      std::sort(v.begin(), v.end());
      return quantile(v, 0.5);
    };
    s_.straggler = RunSummary::Straggler{most->rank, most->times_last, st.instances.size(), median(late),
                                         std::max(median(others_spread), median(others_late))};
  }

  const report::Report& r_;
  RunSummary s_;
  std::vector<std::pair<int64_t, std::pair<int, int64_t>>> times_;  // (step time, (rank, step))
  std::vector<std::pair<double, int>> comm_, exposed_, overlap_;
  std::map<int, std::pair<size_t, metrics::WindowMetrics>> steady_;  // rank -> its steady steps, summed
  std::map<std::string, RunSummary::Missing> missing_;               // by part
  std::map<metrics::Cause, std::pair<std::vector<int>, std::vector<int>>> cause_where_;  // units, ranks
  std::map<metrics::Cause, size_t> cause_steps_;
};

}  // namespace

RunSummary summarize_run(const report::Report& r) { return Summarizer(r).run(); }

}  // namespace shardscope::analysis
