#include "analyzer/analysis/diff_run.h"

#include <algorithm>
#include <map>
#include <set>

#include "analyzer/analysis/rank_test.h"
#include "model/trace.h"

namespace shardscope::analysis {
namespace {

using report::RankReport;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One side's per-step figures: each steady step (completed, not the warm-up) across the run's ranks, by step
// number: its time is the slowest rank's (the step ends when every rank is done), the rest the ranks' mean.
struct StepFigures {
  std::vector<double> step_ms, comm_ms, exposed_ms, exposed_pct, idle_ms;
};

void add_steps(const report::Report& r, StepFigures& out) {
  struct Acc {
    double max_window = 0, comm = 0, exposed = 0, exposed_pct = 0, idle = 0;
    int ranks = 0;
  };
  std::map<int64_t, Acc> by_step;
  for (const RankReport& rank : r.ranks)
    for (size_t i = 0; i < rank.steps.size(); ++i) {
      const report::StepRow& s = rank.steps[i];
      if (s.step.aborted || model::is_warm_up(rank.steps.front().step.number, i, rank.steps.size())) continue;
      Acc& acc = by_step[s.step.number];
      acc.max_window = std::max(acc.max_window, s.m.window_ns / 1e6);
      acc.comm += s.m.comm_ns / 1e6, acc.exposed += s.m.exposed_ns() / 1e6, acc.idle += s.m.idle_ns() / 1e6;
      acc.exposed_pct += s.m.window_ns > 0 ? 100.0 * double(s.m.exposed_ns()) / double(s.m.window_ns) : 0.0;
      ++acc.ranks;
    }
  for (auto& [number, acc] : by_step) {
    const double n = acc.ranks;
    out.step_ms.push_back(acc.max_window);
    out.comm_ms.push_back(acc.comm / n), out.exposed_ms.push_back(acc.exposed / n);
    out.exposed_pct.push_back(acc.exposed_pct / n), out.idle_ms.push_back(acc.idle / n);
  }
}

// Why a side has no steady steps: its first rank's reason, or no steps.
Na steps_na(const std::vector<const AnalysedRun*>& side) {
  for (const AnalysedRun* run : side)
    for (const RankReport& r : run->report.ranks)
      if (r.steps_na != Na::None) return r.steps_na;
  return Na::NoSteps;
}

// The run's peak memory: the largest over its ranks of the allocator's own events' peak, else the trainer's
// allocator_total counter; nullopt when no rank measured either.
std::optional<double> memory_peak(const report::Report& r) {
  std::optional<double> peak;
  for (const RankReport& rank : r.ranks) {
    std::optional<double> v;
    if (rank.memory.measured.events > 0) v = double(rank.memory.measured.peak_allocated);
    for (const metrics::MemoryRow& row : rank.memory.rows)
      if (!v && row.category == "allocator_total" && row.measured) v = row.measured;
    if (v) peak = std::max(peak.value_or(0.0), *v);
  }
  return peak;
}

void judge(RunChange& c) {
  if (!c.a_samples.empty()) c.a = median(c.a_samples);
  if (!c.b_samples.empty()) c.b = median(c.b_samples);
  if (!c.a || !c.b) c.noise = Noise::Missing;
  else if (c.a_samples.size() == 1 && c.b_samples.size() == 1 && !c.per_step)
    c.noise = Noise::NoSpread;
  else if (smallest_p(c.a_samples.size(), c.b_samples.size()) > kNoiseAlpha)
    c.noise = Noise::TooFew;
  else {
    c.p = mann_whitney_p(c.a_samples, c.b_samples);
    c.noise = c.p < kNoiseAlpha ? Noise::Beyond : Noise::Within;
  }
}

// A whole-run figure of each run on a side: `value` per run, nullopt where the run has none.
template <class F>
std::vector<double> per_run(const std::vector<const AnalysedRun*>& side, F value) {
  std::vector<double> v;
  for (const AnalysedRun* run : side)
    if (std::optional<double> x = value(run->report)) v.push_back(*x);
  return v;
}

// A collective kind's figure over a run's ranks: the mean of the ranks that have it.
template <class F>
std::optional<double> kind_mean(const report::Report& r, model::CollectiveKind kind, F value) {
  double sum = 0;
  int n = 0;
  for (const RankReport& rank : r.ranks)
    for (const metrics::CollectiveStats& c : rank.collectives)
      if (c.kind == kind)
        if (std::optional<double> v = value(c)) sum += *v, ++n;
  return n ? std::optional<double>(sum / n) : std::nullopt;
}

void add_kinds(const std::vector<const AnalysedRun*>& a, const std::vector<const AnalysedRun*>& b,
               std::vector<RunChange>& out) {
  std::set<model::CollectiveKind> kinds;
  for (const auto* side : {&a, &b})
    for (const AnalysedRun* run : *side)
      for (const RankReport& rank : run->report.ranks)
        for (const metrics::CollectiveStats& c : rank.collectives) kinds.insert(c.kind);
  for (model::CollectiveKind kind : kinds) {
    const std::string name(model::to_string(kind));
    auto add = [&](const char* suffix, ChangeUnit unit, auto value, Na missing) {
      RunChange c{.key = name + suffix, .unit = unit, .kind = kind};
      auto run_value = [&](const report::Report& r) { return kind_mean(r, kind, value); };
      c.a_samples = per_run(a, run_value), c.b_samples = per_run(b, run_value);
      c.na_a = c.na_b = missing;
      judge(c);
      out.push_back(std::move(c));
    };
    add(
        "_count", ChangeUnit::Count,
        [](const metrics::CollectiveStats& s) -> std::optional<double> { return double(s.count); }, Na::KindNotInRun);
    add(
        "_time_ms", ChangeUnit::Ms,
        [](const metrics::CollectiveStats& s) -> std::optional<double> { return s.time_ns / 1e6; }, Na::KindNotInRun);
    add(
        "_busbw_gbps", ChangeUnit::Gbps, [](const metrics::CollectiveStats& s) { return s.busbw_gbps(); },
        Na::NoBusBandwidth);
  }
}

}  // namespace

std::string key_stem(const RunChange& c) {
  const size_t cut = c.key.rfind('_');
  return cut == std::string::npos ? c.key : c.key.substr(0, cut);
}

SidesDiff diff_sides(const std::vector<const AnalysedRun*>& a, const std::vector<const AnalysedRun*>& b) {
  SidesDiff d;
  d.runs_a = a.size(), d.runs_b = b.size();
  StepFigures sa, sb;
  for (const AnalysedRun* run : a) add_steps(run->report, sa);
  for (const AnalysedRun* run : b) add_steps(run->report, sb);
  const Na na_a = sa.step_ms.empty() ? steps_na(a) : Na::None, na_b = sb.step_ms.empty() ? steps_na(b) : Na::None;
  auto step_row = [&](const char* key, ChangeUnit unit, std::vector<double> StepFigures::*field) {
    RunChange c{.key = key, .unit = unit, .per_step = true, .a_samples = sa.*field, .b_samples = sb.*field};
    c.na_a = na_a, c.na_b = na_b;
    judge(c);
    d.changes.push_back(std::move(c));
  };
  step_row("step_time_ms", ChangeUnit::Ms, &StepFigures::step_ms);
  step_row("comm_ms", ChangeUnit::Ms, &StepFigures::comm_ms);
  step_row("exposed_comm_ms", ChangeUnit::Ms, &StepFigures::exposed_ms);
  step_row("exposed_comm_pct", ChangeUnit::Pct, &StepFigures::exposed_pct);
  step_row("idle_ms", ChangeUnit::Ms, &StepFigures::idle_ms);
  add_kinds(a, b, d.changes);
  RunChange mem{.key = "memory_peak_bytes", .unit = ChangeUnit::Bytes};
  mem.a_samples = per_run(a, memory_peak), mem.b_samples = per_run(b, memory_peak);
  mem.na_a = mem.na_b = Na::NoMemoryMeasured;
  judge(mem);
  d.changes.push_back(std::move(mem));
  for (const AnalysedRun* run : a) d.prefetch_a = metrics::combine(d.prefetch_a, run->prefetch.verdict);
  for (const AnalysedRun* run : b) d.prefetch_b = metrics::combine(d.prefetch_b, run->prefetch.verdict);
  return d;
}

}  // namespace shardscope::analysis
