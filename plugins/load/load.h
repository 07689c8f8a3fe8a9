// Loads a run: expands directories into their trace files, picks an importer per file from its first bytes,
// and imports the files in parallel (one rank per file), with a progress line on a terminal.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/trace.h"
#include "plugins/api/registry.h"

namespace shardscope::plugins {

// How far a load has come: passed to LoadOptions::on_progress once before the first file is read, when a
// file starts, every few MB of its text while it is parsed (trace::parse_progress), and after each file
// (loaded or failed), from the loading threads, one call at a time.
struct LoadProgress {
  size_t files_done = 0, files = 0;
  uint64_t bytes_done = 0, bytes = 0;  // on disk; bytes_done counts the parsed share of the files being read
  std::string file;                    // the file just finished; empty until one has
  // The file this call is about while it is read (empty in the first call and after a file ends): how much
  // of it is parsed, in bytes on disk (a gzip file's parsed text scaled to its compressed size), and its
  // events so far.
  std::string reading;
  uint64_t reading_bytes_done = 0, reading_bytes = 0;
  uint64_t reading_events = 0;
};

// Thrown by load() and load_each() when LoadOptions::cancel was set: the files being read stop at their next
// progress report (a few MB), the others are not started, and nothing loaded is kept.
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("loading cancelled") {}
};

// A file that did not load (LoadOptions::keep_going): its path and the reason, with the byte where known.
struct FileFailure {
  std::string path;
  std::string message;
};

// What check_one_run needs of a rank: its header and where it starts on the wall clock.
struct RankHeader {
  int rank = 0;
  int world_size = 0;
  std::string source;  // the trace
  // The file read where it is not the trace itself (a rank summary, which names its trace in `source`): what
  // a message about the file names first. Empty for a trace.
  std::string file;
  nlohmann::json run_config;
  std::optional<int64_t> wall_start;  // its first event on the wall clock, when the trace maps its clock there
  bool rank_given = true;             // the number came from the file, not from its place among the files
  nlohmann::json distributed;         // Kineto's distributedInfo (backend, world_size, ...); null when none
};
// A file another reader took (LoadOptions::claim): what the loader still needs of it.
struct Claimed {
  RankHeader header;
  std::vector<std::string> warnings;
  uint64_t bytes = 0;  // the trace text it stands for
};

// How the user asked for traces to be read: the CLI's --step-pattern, --step-marker and --allow-mixed.
struct ReadRules {
  // A rank whose importer found no steps gets its own ranges whose name matches this (RE2; the first
  // capture group numbers them) as steps; empty: model::kDefaultStepPattern ("step 3", "iteration 3", ...).
  std::string step_pattern;
  // Set: a rank whose importer found no steps gets a step starting at each host range of exactly this name
  // (model::steps_from_marker) instead of the pattern's.
  std::string step_marker;
  // Files of different runs (check_one_run's errors) are warned of and analysed together instead of refused.
  bool allow_mixed = false;
};

struct LoadOptions {
  const Registry* registry = nullptr;                    // nullptr: the built-in importers plus SHARDSCOPE_PLUGIN_PATH
  std::function<void(const LoadProgress&)> on_progress;  // empty: none
  // Set (from any thread) to stop the load: it throws Cancelled. nullptr: cannot be cancelled.
  const std::atomic<bool>* cancel = nullptr;
  // false: the first file that fails stops the load (its error is thrown). true: it is listed in
  // LoadResult::failures and the rest still load (an error only when none does).
  bool keep_going = false;
  // Threads in all: files in parallel, and what they leave to each file's parse. 0: one per core.
  unsigned threads = 0;
  // Steps where a trace has none of its own, and whether files of different runs are refused.
  ReadRules rules;
  // Keep each event's args (LoadResult::trace.args) for the importers that can (ArgsImporter): what the
  // viewer's details show. Off for reports, which need only what importers map into the events.
  bool keep_args = false;
  // Called for each file on a loading thread before it is read: a result means the caller read the file
  // itself (a rank summary, say) and the loader only checks it belongs to the run. Empty: none claimed.
  std::function<std::optional<Claimed>(uint64_t order, const std::filesystem::path& file)> claim;
  // Set: only the files for which it is true are this process's to read (MPI: each process takes a share);
  // the others are neither read nor checked here. Empty: all.
  std::function<bool(uint64_t order)> mine;
  // The files given are a part of a run's (MPI --files-per-process: this process's): the first one's place
  // among the run's files, and how many files the run has (0: these are all). Orders, and the rank a file
  // that does not say its own is given, count from first_order.
  uint64_t first_order = 0;
  uint64_t run_files = 0;
};

struct LoadResult {
  model::Trace trace;
  std::vector<std::string> warnings;  // truncation, refused plugins, ranks guessed, ranks started far apart
  uint64_t json_bytes = 0;            // text parsed (inflated size)
  std::vector<FileFailure> failures;  // keep_going only: the files that did not load
};

// The files are not one run's ranks: their headers give different world sizes or run configurations, a rank
// beyond the world size, or two files claim the same rank. The message names the files and what differs.
class MixedRunsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The trace files a path names: the file itself, or a directory's files whose names a format of the
// registry takes (Registry::takes_name: *.json, *.sqlite, any *.gz; sorted). nullptr: default_registry().
// Throws trace::TraceError for a missing path or a directory without trace files.
std::vector<std::filesystem::path> expand_inputs(const std::vector<std::filesystem::path>& paths,
                                                 const Registry* registry = nullptr);

// Throws trace::TraceError (file, byte, what) for the first file that cannot be read: missing, corrupt,
// of no known format, or malformed; MixedRunsError when the files are not one run (see check_one_run).
LoadResult load(const std::vector<std::filesystem::path>& paths, const LoadOptions& options = {});

RankHeader header_of(const model::Rank& rank, bool rank_given);

// The warning for a file found in a directory that no importer reads.
std::string passed_over(const std::string& path);

// Checks that ranks read from one set of files belong to one run. Errors (MixedRunsError; warnings instead
// with allow_mixed): world sizes differ; distributedInfo differs (backend, ...: any key but the rank's own);
// a run_config key that shapes the run (sharding, dtypes, prefetch, model, units, batch size, world size,
// ...) differs; a rank at or beyond its world size; two files that both say the same rank; the ranks' first
// events lie more than kRunStartMixedNs apart on the wall clock (ranks whose trace maps onto it: clock_sync
// pairs, or Kineto's wall-clock times). Warnings: another run_config key differs; a rank was guessed from its
// place and collides; first events more than kRunStartSpreadNs apart; with `complete` (these are all the
// run's files) and two or more ranks, ranks below the world size that no file holds. `ranks` in the order
// of their files.
inline constexpr int64_t kRunStartSpreadNs = 5LL * 60 * 1'000'000'000;
inline constexpr int64_t kRunStartMixedNs = 60LL * 60 * 1'000'000'000;
struct OneRunCheck {
  bool allow_mixed = false;
  bool complete = true;
};
void check_one_run(const std::vector<RankHeader>& ranks, std::vector<std::string>& warnings,
                   const OneRunCheck& how = {});

// A run streamed rank by rank: each file is imported on a worker thread and handed to the sink there (a rank
// number the file does not give is its place among the files), then dropped, so at most one rank per thread
// is in memory. The sink is called from several threads at once; what it throws fails that file like an
// import error. Throws as load() does, after every file is read; the result's trace is empty.
struct LoadedRank {
  uint64_t order;  // the file's place among the inputs
  model::Rank& rank;
  model::EventArgs& args;  // empty unless LoadOptions::keep_args
  const RankHeader& header;
  const std::vector<std::string>& warnings;  // the file's: the rank guessed, what its importer noticed
  uint64_t bytes;                            // the file's size on disk
};
using RankSink = std::function<void(LoadedRank&)>;
LoadResult load_each(const std::vector<std::filesystem::path>& paths, const LoadOptions& options, const RankSink& sink);

// The registry the CLI uses: built-ins plus the plugins in SHARDSCOPE_PLUGIN_PATH (refusals appended).
Registry default_registry(std::vector<std::string>& refusals);

}  // namespace shardscope::plugins
