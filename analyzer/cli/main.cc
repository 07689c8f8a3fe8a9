// The shardscope command line. Subcommands live in their own files; this one only wires them to CLI11.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "analyzer/cli/check_prefetch.h"
#include "analyzer/cli/diff.h"
#include "analyzer/cli/inspect.h"
#include "analyzer/cli/launch.h"
#include "analyzer/cli/memory.h"
#include "analyzer/cli/output.h"
#include "analyzer/cli/progress_line.h"
#include "analyzer/cli/report.h"
#include "analyzer/cli/summarize.h"
#include "tracer/format/limits.h"

namespace {

// Range checks whose message reads as a sentence (CLI11's own print the double range to 309 digits) and that
// refuse NaN and infinity, which compare false with every bound.
CLI::Validator positive() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (end == s.c_str() || *end || !std::isfinite(v) || v <= 0)
          return fmt::format("must be a finite number above 0, not '{}'", s.substr(0, 40));
        return {};
      },
      "POSITIVE");
}
// A parameter count: a whole number from `lo` to 1e15 (a thousand times the largest models), so every byte
// count the memory calculator prints stays a plain number rather than inf or 300 digits.
constexpr double kMaxParams = 1e15;
CLI::Validator parameter_count(double lo) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (end == s.c_str() || *end || !std::isfinite(v) || v < lo || v > kMaxParams || v != std::floor(v))
          return fmt::format("must be a whole parameter count from {} to {:g}, not '{}'", lo, kMaxParams,
                             s.substr(0, 40));
        return {};
      },
      fmt::format("{}-{:g}", lo, kMaxParams));
}
CLI::Validator between(long lo, long hi) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        char* end = nullptr;
        const long v = std::strtol(s.c_str(), &end, 10);
        if (end == s.c_str() || *end || v < lo || v > hi)
          return fmt::format("must be a whole number from {} to {}, not '{}'", lo, hi, s.substr(0, 40));
        return {};
      },
      fmt::format("{}-{}", lo, hi));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"shardscope: profiling and diagnostics for sharded data-parallel training (DDP, ZeRO, FSDP)"};
  app.set_version_flag("--version", "shardscope " SHARDSCOPE_VERSION);
  app.require_subcommand(1);

  std::vector<std::string> files;
  std::string format = "text";
  CLI::App* inspect =
      app.add_subcommand("inspect", "Show each trace file's metadata, tracks, event counts, span and truncation");
  inspect->add_option("FILE", files, "Trace files (.json or .json.gz; Nsight Systems exports .sqlite or .sqlite.gz)")
      ->required();
  inspect->add_option("--format", format, "Output format")->check(CLI::IsMember({"text", "json"}));

  std::vector<std::string> paths;
  std::string output = "-";
  CLI::App* report = app.add_subcommand(
      "report",
      "Where each step went: compute, communication (overlapped and exposed), idle; collectives, prefetch, memory");
  CLI::Option* report_paths = report->add_option("PATH", paths,
                                                 "Trace files, rank summaries or directories of them (shardscope or "
                                                 "PyTorch profiler JSON, .json or .json.gz; summaries .sqlite)");
  report->add_option("--format", format, "Output format")->check(CLI::IsMember({"text", "md", "json", "html"}));
  report->add_option("-o,--output", output, "Write to FILE instead of stdout (- for stdout)");
  std::string ranks_arg = "worst", steps_arg;
  report->add_option("--ranks", ranks_arg,
                     "Whose tables follow the run summary: worst (the most exposed communication; the default), "
                     "worst:N, all, or a list like 0,2,5-7");
  report->add_option("--steps", steps_arg,
                     "Which steps the per-step tables show: all or a list like 0,2,5-7 (default: the 2 slowest steady "
                     "steps, and the 3 longest device activities)");
  bool mpi = false;
  CLI::Option* mpi_flag = report->add_flag("--mpi", mpi,
                                           "Run as one process of an MPI job (mpirun -n P, srun): each process "
                                           "summarises its share of the files, process 0 writes the report");
  std::string files_per_process;
  report
      ->add_option("--files-per-process", files_per_process,
                   "With --mpi, instead of PATH: the file or directory each process reads, {rank} its MPI rank and "
                   "{local_rank} its rank on its node "
                   "(e.g. /local/job42/traces.{local_rank}); the report is that of all of them in process order")
      ->needs(mpi_flag)
      ->excludes(report_paths);

  CLI::App* check = app.add_subcommand(
      "check-prefetch", "Verify BACKWARD_PRE prefetch per unit and step; exit 0 effective, 1 not effective, 2 error");
  check->add_option("PATH", paths, "Trace files, rank summaries or directories of them")->required();
  check->add_option("--format", format, "Output format")->check(CLI::IsMember({"text", "json"}));
  check->add_option(
      "--ranks", ranks_arg,
      "Whose steps follow the verdict: worst (the worst prefetch; the default), worst:N, all, or a list like 0,2,5-7");
  check->add_option("--steps", steps_arg, "Which steps to show: all (the default) or a list like 0,2,5-7");
  bool units = false;
  check->add_flag("--units", units,
                  "Show each step's per-unit rows (issue lead, hidden share, exposed wait, cause, late peer)");

  std::string summary_dir;
  CLI::App* summarize = app.add_subcommand("summarize",
                                           "Summarise each rank's trace into a small SQLite file (docs/summaries.md) "
                                           "that report, check-prefetch and diff read");
  summarize->add_option("PATH", paths, "Trace files or directories of per-rank files")->required();
  summarize->add_option("-o,--output", summary_dir, "The directory the summaries go to (one per rank, NAME.sqlite)")
      ->required();

  std::string step_pattern;
  for (CLI::App* c : {report, check, summarize})
    c->add_option(
        "--step-pattern", step_pattern,
        "Ranges whose whole name matches this regex (RE2 syntax) are the steps where the trace has none of its own "
        "(default: \"step 3\", \"iteration 3\"; the first group numbers them)");
  std::string a, b;
  CLI::App* diff = app.add_subcommand(
      "diff", "Compare two runs: metric deltas, and which collectives, device activities and units changed");
  diff->add_option("A", a, "The first run (a trace file or a directory)")->required();
  diff->add_option("B", b, "The second run")->required();
  diff->add_option("--format", format, "Output format")->check(CLI::IsMember({"text", "json"}));
  diff->add_option("--step-pattern", step_pattern, "As report's --step-pattern");

  bool quiet = false;
  for (CLI::App* c : {report, check, diff, summarize})
    c->add_flag("-q,--quiet", quiet, "No progress line on stderr (it shows only on a terminal anyway)");

  // One bound for every command that reads traces: more JSON text than this (a file, or what a gzip
  // inflates to) is refused rather than run out of memory.
  uint64_t max_trace_bytes = 0;
  for (CLI::App* c : {inspect, report, check, diff, summarize})
    c->add_option("--max-trace-bytes", max_trace_bytes,
                  "Refuse a trace whose JSON text (inflated) is larger than this, e.g. 16GiB (default: 4 GiB or an "
                  "eighth of the memory this "
                  "process may use, whichever is less)")
        ->transform(CLI::AsSizeValue(false))
        ->check(positive());

  shardscope::cli::MemoryArgs m;
  int stage = -1;
  double params = 0, largest_unit = 0, root_unit = 0;
  CLI::App* memory = app.add_subcommand(
      "memory",
      "The ZeRO memory calculator: model-state bytes per rank for each stage (the model the report predicts with)");
  auto* preset =
      memory->add_option("--preset", m.preset, "A trainer preset (its units give the gathered bytes under stage 3)")
          ->check(CLI::IsMember({"tiny", "small", "1b", "8b"}));
  auto* params_opt = memory->add_option("--params", params, "Parameter count (e.g. 7.5e9)")->check(parameter_count(1));
  preset->excludes(params_opt);
  memory->add_option("--world", m.world, "Ranks in the sharding group (all ranks with --hybrid-shard)")
      ->required()
      ->check(between(1, 1 << 30));
  memory->add_option("--stage", stage, "ZeRO stage (all four when absent)")->check(between(0, 3));
  memory
      ->add_option("--dtype", m.dtype,
                   "The parameters' dtype: bf16 or fp16 (mixed precision, fp32 master: K = 12) or fp32")
      ->check(CLI::IsMember({"bf16", "fp16", "fp32"}));
  memory
      ->add_option("--precision", m.precision,
                   "zero: the ZeRO paper's accounting (gradients in the parameters' dtype); fsdp: PyTorch FSDP's and "
                   "shardscope-train's (fp32 gradients)")
      ->check(CLI::IsMember({"zero", "fsdp"}));
  memory
      ->add_option("--backward-prefetch", m.backward_prefetch,
                   "pre or post: stage 3 holds two units gathered (the running one and the prefetched one); none: one")
      ->check(CLI::IsMember({"none", "pre", "post"}));
  memory
      ->add_option("--hybrid-shard", m.hybrid_shard,
                   "HYBRID_SHARD: shard within nodes of this many ranks, replicate across nodes")
      ->check(between(1, 1 << 30));
  auto* largest_opt = memory
                          ->add_option("--largest-unit", largest_unit,
                                       "Parameters of the largest FSDP unit (gathered while it runs, stage 3)")
                          ->check(parameter_count(0));
  auto* root_opt = memory->add_option("--root-unit", root_unit, "Parameters of the root unit (kept gathered, stage 3)")
                       ->check(parameter_count(0));
  memory->add_flag("--offload", m.offload, "Sharded state offloaded to the host (stages 2 and 3)");
  memory->add_option("--format", m.format, "Output format")->check(CLI::IsMember({"text", "json"}));

  shardscope::cli::LaunchOptions lo;
  CLI::App* launch = app.add_subcommand(
      "launch", "Start N local ranks with the torchrun variables: shardscope launch -n N -- PROGRAM ARGS...");
  launch->add_option("-n,--nproc", lo.ranks, "Ranks to start")->required()->check(between(1, 1024));
  launch->add_option("--master-port", lo.master_port, "MASTER_PORT (default: a free port)")->check(between(1, 65535));
  launch->add_option("PROGRAM", lo.command, "The program and its arguments, after --")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and usage
    return 2;
  }

  if (max_trace_bytes) shardscope::trace::limits().max_text_bytes = max_trace_bytes;
  shardscope::cli::set_progress_quiet(quiet);
  const int rc = [&]() -> int {
    if (*inspect) return shardscope::cli::inspect(files, format == "json", std::cout, std::cerr);
    if (*launch) return shardscope::cli::launch(lo);
    // --ranks and --steps, checked before any file is read.
    std::optional<shardscope::report::Selection> sel;
    if (*report || *check) try {
        sel = shardscope::report::parse_selection(ranks_arg, steps_arg);
      } catch (const std::invalid_argument& e) {
        shardscope::cli::print_error(std::cerr, e.what());
        return 2;
      }
    if (*report && paths.empty() && files_per_process.empty()) {
      shardscope::cli::print_error(std::cerr, "report: PATH is required (or, with --mpi, --files-per-process PATTERN)");
      return 2;
    }
    if (*report && mpi)
      return shardscope::cli::report_mpi(paths, format, output, std::cout, std::cerr, step_pattern, *sel,
                                         files_per_process);
    if (*report) return shardscope::cli::report(paths, format, output, std::cout, std::cerr, step_pattern, *sel);
    if (*check) return shardscope::cli::check_prefetch(paths, format, std::cout, std::cerr, step_pattern, *sel, units);
    if (*summarize) return shardscope::cli::summarize(paths, summary_dir, std::cout, std::cerr, step_pattern);
    if (*diff) return shardscope::cli::diff(a, b, format, std::cout, std::cerr, step_pattern);
    if (*memory) {
      if (*params_opt) m.params = params;
      if (*largest_opt) m.largest_unit = largest_unit;
      if (*root_opt) m.root_unit = root_unit;
      if (stage >= 0) m.stage = stage;
      return shardscope::cli::memory(m, std::cout, std::cerr);
    }
    return 2;
  }();
  return shardscope::cli::finish_stdout(std::cout, std::cerr, rc);
}
