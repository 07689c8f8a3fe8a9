// A run of hundreds of ranks opened from its rank summaries (`shardscope summarize`, docs/summaries.md):
// a row per rank with what its summary holds (steps, compute, communication and exposed communication per
// step, the prefetch verdict) and how often it arrived last at a collective (the reduce over the summaries,
// analysis::RunReducer / metrics::InstanceTable). No events are loaded: a rank's trace is read only when
// the user opens that rank, and then on its own.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/analysis/run.h"
#include "plugins/load/load.h"

namespace shardscope::viewer {

// The inputs of a run opened from summaries: the summary files, and any trace given without a summary of
// its own (it is summarised on the way, its events dropped). A trace beside its summary (same stem) is the
// summary's trace and is not read.
struct SummaryInputs {
  std::vector<std::filesystem::path> summaries;
  std::vector<std::filesystem::path> unsummarised;   // traces with no summary among the inputs
  size_t paired = 0;                                 // traces left unread because their summary is here
  std::vector<std::filesystem::path> files() const;  // summaries then unsummarised traces
};

// The summaries among `paths` (files or directories, as plugins::expand_inputs lists them); nullopt when
// there is none (a run of traces, opened as ever). Throws what expand_inputs throws.
std::optional<SummaryInputs> find_summaries(const std::vector<std::filesystem::path>& paths);

struct RankOverviewRow {
  int rank = 0;
  std::string summary;                         // the summary file; empty for a trace summarised on the way
  std::string source;                          // the trace as the summary records it
  std::string format;                          // its importer
  size_t steps = 0, steady_steps = 0;          // steady: completed and not the warm-up (first) step
  analysis::Na steps_na = analysis::Na::None;  // why there are no steps
  // Over the steady steps: the median step (its window), and per step the mean compute, communication and
  // exposed communication; the exposed share of the steady steps' time. Absent without steady steps.
  std::optional<int64_t> step_ns, compute_ns, comm_ns, exposed_ns;
  std::optional<double> exposed_pct;
  // The reduce: collective instances this rank arrived last at, and by how much at most (after the next).
  size_t times_last = 0;
  int64_t max_late_ns = 0;
  // The prefetch check, re-judged with late peers from the reduce.
  metrics::Verdict prefetch = metrics::Verdict::NotApplicable;
  bool prefetch_checked = false;  // false: nothing to check on this rank (no backward all-gathers)
  double hidden_share = 0;        // of the steady steps' backward all-gather time
};

struct RanksOverview {
  std::vector<std::string> inputs;
  std::vector<RankOverviewRow> rows;                            // the default order: slowest_first()
  size_t instances = 0;                                         // collective instances matched across ranks
  int straggler = -1;                                           // the rank last at the most instances; -1 none
  metrics::Verdict prefetch = metrics::Verdict::NotApplicable;  // the run's
  std::vector<std::string> warnings;
  std::vector<plugins::FileFailure> failures;
  size_t events_loaded = 0;  // events held after opening: 0, the summaries' point
};

// Reads the summaries (and summarises the unsummarised traces, one at a time) and reduces them. Throws
// what analysis::analyse_stream throws; options.keep_going lists bad files in `failures`.
RanksOverview open_overview(const SummaryInputs& inputs, plugins::LoadOptions options);
// The rows of an analysed run (analyse_stream's or analyse_run's: the same numbers).
RanksOverview overview_of(const analysis::AnalysedRun& run);

// Sorting: the column, and the order rows take by it (ties by rank).
enum class OverviewColumn { Rank, StepTime, Compute, Comm, Exposed, ExposedPct, TimesLast, Prefetch };
void sort_rows(std::vector<RankOverviewRow>& rows, OverviewColumn column, bool descending);
// The default order: the ranks that arrived last at the most collectives first, then the slowest step.
void slowest_first(std::vector<RankOverviewRow>& rows);

// A rank's trace, to load its events: the path its summary records (as given when it was summarised:
// absolute, or relative to the working directory), else the trace beside the summary with the same stem
// (rank3.sqlite: rank3.json.gz, rank3.json, rank3.gz) or the recorded file name. `note` says where it was
// found, or every place looked when it was not.
struct TraceLookup {
  std::optional<std::filesystem::path> path;
  std::string note;
};
TraceLookup trace_of(const RankOverviewRow& row);

}  // namespace shardscope::viewer
