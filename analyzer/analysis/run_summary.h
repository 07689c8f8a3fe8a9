// The answers a user came for, over every rank, in a handful of numbers: how long a step takes, how much of
// it communication takes and how much of that is exposed, whether prefetch works, which rank is late, whether
// memory matches the ZeRO model, and what could not be computed. Computed from the report (no new metric),
// the same for 2 ranks or 2,000; rendered first by every format (report/summary_render.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/analysis/na.h"
#include "analyzer/analysis/report.h"

namespace shardscope::analysis {

// A value across ranks: smallest, median, largest, and the ranks with the extremes.
struct AcrossRanks {
  double min = 0, median = 0, max = 0;
  int min_rank = 0, max_rank = 0;
  size_t ranks = 0;  // how many ranks have the value
};

struct StepTimes {
  int64_t median_ns = 0, p90_ns = 0, max_ns = 0;
  int max_rank = 0;
  int64_t max_step = 0;
  size_t steps = 0;  // (rank, step) pairs measured
};

struct RunSummary {
  size_t ranks = 0;
  size_t steps = 0, steady_steps = 0;  // the most any rank has; steady: completed, after the warm-up step
  std::optional<StepTimes> step_time;  // over every rank's steady steps
  // Communication per rank over its steady steps (the whole trace where a rank has no steps).
  std::optional<AcrossRanks> comm_pct, exposed_pct, overlap_pct;
  bool comm_from_whole_trace = false;  // some rank had no steps
  int worst_rank = -1;                 // the most exposed communication: its tables are the ones shown
  // Where that rank's steady steps went, summed: step = compute only + overlapped + exposed communication +
  // other device work (copies, syncs) + idle.
  struct Budget {
    int rank = 0;
    size_t steps = 0;
    metrics::WindowMetrics sum;
    int64_t compute_only_ns() const { return sum.compute_ns - sum.overlap_ns; }
    int64_t other_ns() const { return sum.busy_ns - (sum.compute_ns + sum.comm_ns - sum.overlap_ns); }
  };
  std::optional<Budget> budget;
  std::vector<int> by_exposed;   // every rank, the most exposed communication first
  std::vector<int> by_prefetch;  // every rank, the worst prefetch first (not effective, then least hidden)

  // The prefetch verdict, with its ranks and steady steps.
  metrics::Verdict prefetch = metrics::Verdict::NotApplicable;
  size_t prefetch_ranks = 0, prefetch_ranks_effective = 0;
  size_t prefetch_steps = 0, prefetch_steps_effective = 0;
  metrics::Cause common_cause = metrics::Cause::None;  // over the steady steps judged not effective
  size_t common_cause_steps = 0;
  std::vector<int> cause_units, cause_ranks;  // where that cause was the step's

  // The straggler: the rank that arrived last at the most collective instances.
  // Named only when its lateness is beyond the arrivals' own spread (`noise_ns`): the larger of the median
  // spread of the other ranks' arrivals and the median lateness of the instances another rank was last at.
  // Over hundreds of ranks some rank is always last, by jitter.
  struct Straggler {
    int rank = 0;
    size_t times_last = 0, instances = 0;
    int64_t median_late_ns = 0;
    int64_t noise_ns = 0;
    bool beyond_noise() const { return median_late_ns > noise_ns; }
  };
  std::optional<Straggler> straggler;

  // The links (each collective instance timed by its fastest rank), per kind, and how much of each rank's
  // collective time is waiting for peers: (its time - the fastest rank's at the same instances) / its time, over
  // the kinds with a wait share.
  struct Link {
    model::CollectiveKind kind = model::CollectiveKind::None;
    std::optional<double> busbw_gbps, algbw_gbps;
  };
  std::vector<Link> links;
  std::optional<AcrossRanks> wait_pct;

  // Memory against the ZeRO model.
  size_t memory_ranks = 0, memory_ranks_agree = 0;  // ranks with a measured and predicted category
  struct Departure {
    int rank = 0;
    std::string category;
    double measured = 0, predicted = 0;
  };
  std::optional<Departure> departs_most;
  // Measured from the GPU allocator's events (metrics/memory_measured.h): the highest rank's peak.
  struct MeasuredPeak {
    int rank = 0;
    int64_t bytes = 0;
    bool in_step = false;
    int64_t step = 0;
  };
  std::optional<MeasuredPeak> measured_peak;
  size_t measured_ranks = 0;  // ranks with allocator events

  // What could not be computed: which part, on which ranks, and why (the reason's code).
  struct Missing {
    std::string part;  // "steps", "prefetch", "memory", "stragglers", "whole trace"
    std::vector<int> ranks;
    Na na = Na::None;
    metrics::NotApplicable prefetch_na = metrics::NotApplicable::None;
    metrics::StragglersNa stragglers_na = metrics::StragglersNa::None;
  };
  std::vector<Missing> missing;
};

RunSummary summarize_run(const report::Report& r);

// "0-3, 5, 7-9": ranks as ranges. At most `max_ranges` of them, then "and N more" (N counts ranks), so a
// list stays short at any rank count.
std::string rank_ranges(std::vector<int> ranks, size_t max_ranges = SIZE_MAX);

}  // namespace shardscope::analysis
