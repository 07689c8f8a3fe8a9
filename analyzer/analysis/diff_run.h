// The run-level answer of `diff`: each side is one or more runs of the same configuration; each figure a CI
// job gates on (step time, communication, exposed communication, idle, each collective kind's time, count and
// bus bandwidth, the memory peak, the prefetch verdict) is compared between the sides, and a change is told
// from the runs' own spread by a rank test (rank_test.h) over the steady steps (or, for a figure a run has
// once, over the runs). A timing figure must also clear the run-to-run noise, which a run's own steps do not
// show: with several runs, the spread between them; with one run a side, a floor. Data only;
// report/diff_render.h words it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/analysis/na.h"
#include "analyzer/analysis/run.h"

namespace shardscope::analysis {

// A figure's unit: the suffix of its JSON key, and how a threshold on it may be written (diff_gate.h).
enum class ChangeUnit { Ms, Pct, Bytes, Gbps, Count };

// Whether a change is beyond the spread of the values it was measured from.
enum class Noise {
  Beyond,       // the rank test's p-value is under kNoiseAlpha, and the change clears the run-to-run noise
  Within,       // the p-value is not under kNoiseAlpha
  WithinFloor,  // it is, but the relative change is under the noise floor (one run a side)
  WithinRuns,   // it is, but the change is within the spread between the runs (several runs)
  TooFew,       // too few values on a side for any change to reach kNoiseAlpha (smallest_p)
  NoSpread,     // one value per side (a whole-run figure of one run each): the change is taken as it is
  Missing,      // a side has no value
};

// Which run-to-run noise a timing figure had to clear (docs/diff.md "Run-to-run noise").
enum class RunNoise {
  None,         // not a timing figure (counts, memory): the program fixes it, not the machine
  Floor,        // one run a side: a relative change under NoiseRule::floor_pct is never beyond the noise
  BetweenRuns,  // several runs: the change between the runs' means must exceed Student's t bound on them
};

// For a dedicated GPU node: the H100 runs in tests/data keep their steady steps within 0.3-5.6% of their
// run's median (docs/diff.md). A shared machine's floor is far higher (the 2-core development VM under load:
// +329% between two CPU runs of one configuration): `--noise-floor`, or several runs a side.
inline constexpr double kDefaultNoiseFloorPct = 5;

struct NoiseRule {
  double floor_pct = kDefaultNoiseFloorPct;  // `diff --noise-floor`
};

struct RunChange {
  std::string key;  // the JSON key with its unit: "step_time_ms", "all_gather_busbw_gbps"
  ChangeUnit unit = ChangeUnit::Ms;
  bool per_step = false;                     // samples are steady steps (else one a run)
  std::vector<double> a_samples, b_samples;  // in the key's unit
  std::optional<double> a, b;                // each side's median of its samples
  Na na_a = Na::None, na_b = Na::None;       // why a side has none
  model::CollectiveKind kind = model::CollectiveKind::None;
  double p = 1.0;  // the rank test's two-sided p-value
  Noise noise = Noise::Missing;
  RunNoise run_noise = RunNoise::None;
  double floor_pct = 0;                  // Floor: the floor applied
  std::vector<double> a_runs, b_runs;    // BetweenRuns: each run's median of its steps
  double run_change = 0, run_bound = 0;  // BetweenRuns: the change in the runs' means, and t · its standard error
  bool beyond_noise() const { return noise == Noise::Beyond || (noise == Noise::NoSpread && *a != *b); }
};

struct SidesDiff {
  size_t runs_a = 0, runs_b = 0;
  NoiseRule rule;
  std::vector<RunChange> changes;  // step time, communication, ..., then per collective kind, then memory
  // Each side's prefetch verdict over its runs (metrics::combine: not effective when any run is).
  metrics::Verdict prefetch_a = metrics::Verdict::NotApplicable, prefetch_b = metrics::Verdict::NotApplicable;
};

// `a` and `b`: each side's runs (at least one each).
SidesDiff diff_sides(const std::vector<const AnalysedRun*>& a, const std::vector<const AnalysedRun*>& b,
                     const NoiseRule& rule = {});

// A per-step timing figure judged from each run's steady-step values (a run without any left out): the rank
// test over the pooled steps, then the run-to-run noise (RunNoise). diff_sides' rule, open to the tests.
RunChange judge_steps(std::string key, ChangeUnit unit, const std::vector<std::vector<double>>& a_runs,
                      const std::vector<std::vector<double>>& b_runs, const NoiseRule& rule);

// The key without its unit suffix: "step_time_ms" → "step_time".
std::string key_stem(const RunChange& c);

}  // namespace shardscope::analysis
