#include "analyzer/analysis/diff_run.h"

#include <algorithm>
#include <cmath>
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

// The relative change is under the floor; from zero, any change is over it.
bool under_floor(const RunChange& c, double floor_pct) {
  const double d = std::fabs(*c.b - *c.a);
  return *c.a != 0 ? 100 * d / std::fabs(*c.a) < floor_pct : d == 0;
}

// One run a side: the floor. Applies to a per-step figure the rank test put beyond the noise, and to a whole-run
// timing figure (one value a side, no spread of its own).
void apply_floor(RunChange& c, double floor_pct) {
  c.run_noise = RunNoise::Floor, c.floor_pct = floor_pct;
  if ((c.noise == Noise::Beyond || (c.noise == Noise::NoSpread && *c.a != *c.b)) && under_floor(c, floor_pct))
    c.noise = Noise::WithinFloor;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}

// Several runs: Student's t over the runs' medians, the variance pooled within the sides. A rank test over the
// runs cannot reach kNoiseAlpha under 4 runs a side (smallest_p), and a side's median of steps already takes a
// step outlier out of its run's value; t's quantile widens the bound for a spread measured from few runs.
void apply_between_runs(RunChange& c, const std::vector<std::vector<double>>& a_runs,
                        const std::vector<std::vector<double>>& b_runs) {
  c.run_noise = RunNoise::BetweenRuns;
  for (const auto& r : a_runs) c.a_runs.push_back(median(r));
  for (const auto& r : b_runs) c.b_runs.push_back(median(r));
  const double ma = mean(c.a_runs), mb = mean(c.b_runs);
  double ss = 0;
  for (double x : c.a_runs) ss += (x - ma) * (x - ma);
  for (double x : c.b_runs) ss += (x - mb) * (x - mb);
  const size_t na = c.a_runs.size(), nb = c.b_runs.size(), df = na + nb - 2;
  c.run_change = mb - ma;
  c.run_bound = student_t_critical(df) * std::sqrt(ss / double(df) * (1.0 / double(na) + 1.0 / double(nb)));
  if (c.noise == Noise::Beyond && !(std::fabs(c.run_change) > c.run_bound)) c.noise = Noise::WithinRuns;
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

RunChange judge_steps(std::string key, ChangeUnit unit, const std::vector<std::vector<double>>& a_runs,
                      const std::vector<std::vector<double>>& b_runs, const NoiseRule& rule) {
  RunChange c{.key = std::move(key), .unit = unit, .per_step = true};
  std::vector<std::vector<double>> ra, rb;
  for (const auto* side : {&a_runs, &b_runs})
    for (const std::vector<double>& r : *side)
      if (!r.empty()) {
        (side == &a_runs ? ra : rb).push_back(r);
        auto& pooled = side == &a_runs ? c.a_samples : c.b_samples;
        pooled.insert(pooled.end(), r.begin(), r.end());
      }
  judge(c);
  if (c.noise == Noise::Missing) return c;
  if (ra.size() == 1 && rb.size() == 1) apply_floor(c, rule.floor_pct);
  else
    apply_between_runs(c, ra, rb);
  return c;
}

std::string key_stem(const RunChange& c) {
  const size_t cut = c.key.rfind('_');
  return cut == std::string::npos ? c.key : c.key.substr(0, cut);
}

SidesDiff diff_sides(const std::vector<const AnalysedRun*>& a, const std::vector<const AnalysedRun*>& b,
                     const NoiseRule& rule) {
  SidesDiff d;
  d.runs_a = a.size(), d.runs_b = b.size(), d.rule = rule;
  std::vector<StepFigures> sa(a.size()), sb(b.size());
  for (size_t i = 0; i < a.size(); ++i) add_steps(a[i]->report, sa[i]);
  for (size_t i = 0; i < b.size(); ++i) add_steps(b[i]->report, sb[i]);
  auto none = [](const std::vector<StepFigures>& s) {
    return std::all_of(s.begin(), s.end(), [](const StepFigures& f) { return f.step_ms.empty(); });
  };
  const Na na_a = none(sa) ? steps_na(a) : Na::None, na_b = none(sb) ? steps_na(b) : Na::None;
  auto step_row = [&](const char* key, ChangeUnit unit, std::vector<double> StepFigures::*field) {
    std::vector<std::vector<double>> ra, rb;
    for (const StepFigures& f : sa) ra.push_back(f.*field);
    for (const StepFigures& f : sb) rb.push_back(f.*field);
    RunChange c = judge_steps(key, unit, ra, rb, rule);
    c.na_a = na_a, c.na_b = na_b;
    d.changes.push_back(std::move(c));
  };
  step_row("step_time_ms", ChangeUnit::Ms, &StepFigures::step_ms);
  step_row("comm_ms", ChangeUnit::Ms, &StepFigures::comm_ms);
  step_row("exposed_comm_ms", ChangeUnit::Ms, &StepFigures::exposed_ms);
  step_row("exposed_comm_pct", ChangeUnit::Pct, &StepFigures::exposed_pct);
  step_row("idle_ms", ChangeUnit::Ms, &StepFigures::idle_ms);
  add_kinds(a, b, d.changes);
  // A collective kind's time and bandwidth are timings too: with one run a side, the floor.
  for (RunChange& c : d.changes)
    if (!c.per_step && c.unit != ChangeUnit::Count && c.noise == Noise::NoSpread) apply_floor(c, rule.floor_pct);
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
