// The shardscope command line. Subcommands live in their own files; this one only wires them to CLI11.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <tuple>

#include <malloc.h>

#include <fmt/format.h>

#include "analyzer/analysis/summary_file.h"
#include "analyzer/cli/check_prefetch.h"
#include "analyzer/cli/diff.h"
#include "analyzer/cli/export.h"
#include "analyzer/cli/follow.h"
#include "analyzer/cli/inspect.h"
#include "analyzer/cli/launch.h"
#include "analyzer/cli/memory.h"
#include "analyzer/cli/output.h"
#include "analyzer/cli/progress_line.h"
#include "analyzer/cli/report.h"
#include "analyzer/cli/summarize.h"
#include "analyzer/cli/whatif.h"
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
// --max-trace-bytes: read by trace::parse_bytes, as the viewer reads it, and handed on as bytes.
CLI::Validator byte_size() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const std::optional<uint64_t> n = shardscope::trace::parse_bytes(s);
        if (!n) return fmt::format("wants a size above 0 (4096, 64MiB, 16GiB), not '{}'", s.substr(0, 40));
        s = std::to_string(*n);
        return {};
      },
      "SIZE");
}
// A what-if speed factor: from 0.001 to 1000, so every replayed time stays within the clock's range.
CLI::Validator speed() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (end == s.c_str() || *end || !std::isfinite(v) || v < 1e-3 || v > 1e3)
          return fmt::format("must be a number from 0.001 to 1000, not '{}'", s.substr(0, 40));
        return {};
      },
      "0.001-1000");
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

// Every option's value, filled by CLI11 as it parses.
struct Args {
  std::vector<std::string> files, paths;
  std::string format = "text", output = "-", ranks_arg = "worst", steps_arg, files_per_process, summary_dir;
  std::string follow;                  // report --follow DIR
  double follow_timeout = 0;           // and when it gives up; 0: never
  std::vector<std::string> diff_runs;  // diff's positionals; side B's after cli::kSideBreak
  shardscope::cli::DiffArgs d;
  shardscope::plugins::ReadRules rules;
  bool mpi = false, units = false, quiet = false, perfetto = false, no_whatif = false;
  uint64_t max_trace_bytes = 0;
  shardscope::cli::MemoryArgs m;
  int stage = -1;
  double params = 0, largest_unit = 0, root_unit = 0;
  double seq_len = 0, micro_batch = 0, hidden = 0, layers = 0, heads = 0;  // memory's activation shape
  shardscope::cli::LaunchOptions lo;
  // report: the memory model's inputs over what the trace shows.
  double given_params = 0;
  int given_world = 0;
  std::string given_sharding, given_dtype, given_optimizer;
  // whatif: the change (metrics/whatif.h).
  std::string backward_prefetch, forward_prefetch;
  int limit_all_gathers = 0, unit = -1;
  double comm_speed = 1.0, compute_speed = 1.0;
};

// The subcommands, and the options whose presence run() asks about.
struct Commands {
  CLI::App *inspect, *report, *check, *summarize, *diff, *memory, *launch, *exporter, *whatif;
  CLI::Option *limit_opt, *unit_opt;
  CLI::Option *params_opt, *largest_opt, *root_opt;
  CLI::Option *given_params, *given_world, *given_sharding, *given_dtype, *given_optimizer;
};

// report's flags for the memory model's inputs (metrics/memory_inference.h): each overrides what the trace
// shows or its run_config says.
void add_memory_inputs(CLI::App& report, Args& x, Commands& c) {
  c.given_params = report.add_option("--params", x.given_params, "Memory model: the parameter count (e.g. 7.5e9)")
                       ->check(parameter_count(1));
  c.given_world =
      report.add_option("--world-size", x.given_world, "Memory model: ranks in the run")->check(between(1, 1 << 30));
  c.given_sharding =
      report
          .add_option("--sharding", x.given_sharding,
                      "Memory model: the strategy (FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD; zero1-3, ddp)")
          ->check(CLI::Validator(
              [](std::string& s) -> std::string {
                return shardscope::metrics::stage_of_sharding(s)
                           ? std::string()
                           : fmt::format(
                                 "must be FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD, zero1, zero2, "
                                 "zero3 or ddp, not '{}'",
                                 s.substr(0, 40));
              },
              "STRATEGY"));
  c.given_dtype = report.add_option("--dtype", x.given_dtype, "Memory model: the parameters' dtype")
                      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  c.given_optimizer =
      report
          .add_option("--optimizer", x.given_optimizer, "Memory model: the optimizer (the model counts AdamW's state)")
          ->check(CLI::Validator(
              [](std::string& s) -> std::string {
                const bool ok = !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](unsigned char ch) {
                  return std::isalnum(ch) || ch == '_' || ch == '-';
                });
                return ok ? std::string() : "must be an optimizer's name (letters, digits, _ or -; up to 64)";
              },
              "NAME"));
}

shardscope::metrics::MemoryGiven memory_given(const Args& x, const Commands& c) {
  shardscope::metrics::MemoryGiven g;
  if (*c.given_params) g.params = x.given_params;
  if (*c.given_world) g.world_size = x.given_world;
  if (*c.given_sharding) g.sharding = x.given_sharding;
  if (*c.given_dtype) g.dtype = x.given_dtype;
  if (*c.given_optimizer) g.optimizer = x.given_optimizer;
  return g;
}

// whatif's change: each flag unset keeps the run as measured.
void add_whatif(CLI::App& app, Args& x, Commands& c) {
  c.whatif = app.add_subcommand(
      "whatif", "Replay a measured run with prefetch, the rate limiter or speeds changed: the predicted step time");
  c.whatif->add_option("RUN", x.paths, "Trace files or a directory of one run's ranks")->required();
  c.whatif->add_option("--backward-prefetch", x.backward_prefetch, "BACKWARD_PRE, BACKWARD_POST or none")
      ->check(CLI::IsMember({"pre", "post", "none"}));
  c.whatif->add_option("--forward-prefetch", x.forward_prefetch, "Forward prefetch")
      ->check(CLI::IsMember({"on", "off"}));
  c.limit_opt = c.whatif
                    ->add_option("--limit-all-gathers", x.limit_all_gathers,
                                 "All-gathers in flight at most (the rate limiter; 0: no limit)")
                    ->check(between(0, 1 << 20));
  c.whatif->add_option("--comm-speed", x.comm_speed, "Communication this many times as fast (2: twice; 0.001 to 1000)")
      ->check(speed());
  c.whatif->add_option("--compute-speed", x.compute_speed, "Compute this many times as fast (0.001 to 1000)")
      ->check(speed());
  c.unit_opt = c.whatif->add_option("--unit", x.unit, "Change only this FSDP unit's all-gathers and compute")
                   ->check(between(0, 1 << 20));
  c.whatif->add_option("--format", x.format, "Output format")->check(CLI::IsMember({"text", "json"}));
}

shardscope::metrics::WhatIfChange whatif_change(const Args& x, const Commands& c) {
  namespace m = shardscope::metrics;
  m::WhatIfChange w;
  if (!x.backward_prefetch.empty())
    w.backward = x.backward_prefetch == "pre"    ? m::Prefetch::Pre
                 : x.backward_prefetch == "post" ? m::Prefetch::Post
                                                 : m::Prefetch::None;
  if (!x.forward_prefetch.empty()) w.forward = x.forward_prefetch == "on";
  if (*c.limit_opt) w.limit = x.limit_all_gathers;
  if (*c.unit_opt) w.unit = x.unit;
  w.comm_speed = x.comm_speed, w.compute_speed = x.compute_speed;
  return w;
}

void add_reading(CLI::App& app, Args& x, Commands& c, const std::string& formats) {
  c.inspect =
      app.add_subcommand("inspect", "Show each trace file's metadata, tracks, event counts, span and truncation");
  c.inspect->add_option("FILE", x.files, "Trace files: " + formats)->required();
  c.inspect->add_option("--format", x.format, "Output format")->check(CLI::IsMember({"text", "json"}));

  c.report = app.add_subcommand(
      "report",
      "Where each step went: compute, communication (overlapped and exposed), idle; collectives, prefetch, memory");
  CLI::Option* report_paths =
      c.report->add_option("PATH", x.paths, "Trace files, rank summaries or directories of them: " + formats);
  c.report->add_option("--format", x.format, "Output format")->check(CLI::IsMember({"text", "md", "json", "html"}));
  c.report->add_option("--ranks", x.ranks_arg,
                       "Whose tables follow the run summary: worst (the most exposed communication; the default), "
                       "worst:N, all, or a list like 0,2,5-7");
  c.report->add_option("--steps", x.steps_arg,
                       "Which steps the per-step tables show: all or a list like 0,2,5-7 (default: the 2 slowest "
                       "steady steps, and the 3 longest device activities)");
  CLI::Option* mpi_flag = c.report->add_flag("--mpi", x.mpi,
                                             "Run as one process of an MPI job (mpirun -n P, srun): each process "
                                             "summarises its share of the files, process 0 writes the report");
  c.report
      ->add_option("--files-per-process", x.files_per_process,
                   "With --mpi, instead of PATH: the file or directory each process reads, {rank} its MPI rank and "
                   "{local_rank} its rank on its node "
                   "(e.g. /local/job42/traces.{local_rank}); the report is that of all of them in process order")
      ->needs(mpi_flag)
      ->excludes(report_paths);
  CLI::Option* follow =
      c.report
          ->add_option("--follow", x.follow,
                       "A running job's trace folder: one line a step (time, communication, exposed, the late "
                       "rank) as every rank finishes it, until every rank's file is complete (docs/follow.md)")
          ->excludes(report_paths)
          ->excludes(mpi_flag);
  c.report
      ->add_option("--follow-timeout", x.follow_timeout,
                   "With --follow: give up (exit 1) after this many seconds if the job has not finished")
      ->needs(follow)
      ->check(positive());
  add_memory_inputs(*c.report, x, c);

  c.check = app.add_subcommand(
      "check-prefetch", "Verify BACKWARD_PRE prefetch per unit and step; exit 0 effective, 1 not effective, 2 error");
  c.check->add_option("PATH", x.paths, "Trace files, rank summaries or directories of them")->required();
  c.check->add_option("--format", x.format, "Output format")->check(CLI::IsMember({"text", "json"}));
  c.check->add_option(
      "--ranks", x.ranks_arg,
      "Whose steps follow the verdict: worst (the worst prefetch; the default), worst:N, all, or a list like 0,2,5-7");
  c.check->add_option("--steps", x.steps_arg, "Which steps to show: all (the default) or a list like 0,2,5-7");
  c.check->add_flag("--units", x.units,
                    "Show each step's per-unit rows (issue lead, hidden share, exposed wait, cause, late peer)");
  c.check->add_flag("--no-whatif", x.no_whatif,
                    "Not effective: leave out what the replay with BACKWARD_PRE predicts it would save (it reads "
                    "the files again)");

  c.summarize = app.add_subcommand("summarize",
                                   "Summarise each rank's trace into a small SQLite file (docs/summaries.md) "
                                   "that report, check-prefetch and diff read");
  c.summarize->add_option("PATH", x.paths, "Trace files or directories of per-rank files")->required();
  c.summarize->add_option("-o,--output", x.summary_dir, "The directory the summaries go to (one per rank, NAME.sqlite)")
      ->required();

  c.diff = app.add_subcommand("diff",
                              "Compare runs A and B (or A1 A2 -- B1 B2): the run-level changes and whether each is "
                              "beyond the noise; with --fail-on, exit 1 when a threshold is crossed (docs/diff.md)");
  c.diff
      ->add_option("RUNS", x.diff_runs,
                   "A B, or each side's runs: A1 A2 -- B1 B2 (trace files, rank summaries or directories of them)")
      ->required();
  c.diff->add_option("--format", x.d.format, "Output format")
      ->check(CLI::IsMember({"text", "md", "markdown", "json", "junit"}));
  c.diff->add_option("--fail-on", x.d.fail_on,
                     "Thresholds, e.g. 'step_time>+5%,exposed_comm>+2pp,memory_peak>+512MiB,prefetch=not_effective': "
                     "exit 1 when B crosses one beyond the noise");
  c.diff->add_option("--noise-floor", x.d.noise_floor,
                     "With one run a side, a step-time (or other timing) change under this share is within the "
                     "noise (default 5%, a dedicated GPU node's; a shared machine needs far more: docs/diff.md)");
  c.diff->add_flag("--ranks", x.d.ranks, "Add each rank pair's table (the first run of each side)");
  c.diff->add_flag("--units", x.d.units, "Add each FSDP unit's hidden all-gather share to the rank tables");
  c.exporter = app.add_subcommand("export",
                                  "Write the run as one timeline that ui.perfetto.dev opens: every rank clock-aligned, "
                                  "with shardscope's findings (steps, exposed communication, prefetch verdicts, last "
                                  "arrivals) as tracks");
  c.exporter->add_option("PATH", x.paths, "Trace files or directories of them: " + formats)->required();
  c.exporter->add_flag("--perfetto", x.perfetto, "Chrome-trace JSON for ui.perfetto.dev (the one format so far)")
      ->required();
  add_whatif(app, x, c);
  for (CLI::App* sub : {c.report, c.check, c.summarize, c.diff, c.exporter, c.whatif}) {
    CLI::Option* pattern = sub->add_option(
        "--step-pattern", x.rules.step_pattern,
        "Ranges whose whole name matches this regex (RE2 syntax) are the steps where the trace has none of its own "
        "(default: \"step 3\", \"iteration 3\"; the first group numbers them; with none of these, each "
        "Optimizer.step ends a step)");
    sub->add_option("--step-marker", x.rules.step_marker,
                    "Where the trace has no steps of its own, a step starts at each range named exactly NAME")
        ->option_text("NAME")
        ->excludes(pattern);
    sub->add_flag("--allow-mixed", x.rules.allow_mixed,
                  "Analyse files that look like different runs together (different world size, distributedInfo, "
                  "run configuration, start hours apart, a rank twice), with a warning instead of an error");
  }

  for (CLI::App* sub : {c.report, c.check, c.diff, c.summarize, c.exporter, c.whatif})
    sub->add_flag("-q,--quiet", x.quiet, "No progress line on stderr (it shows only on a terminal anyway)");

  // One bound for every command that reads traces: more JSON text than this (a file, or what a gzip
  // inflates to) is refused rather than run out of memory.
  for (CLI::App* sub : {c.inspect, c.report, c.check, c.diff, c.summarize, c.exporter, c.whatif})
    sub->add_option("--max-trace-bytes", x.max_trace_bytes,
                    "Refuse a trace whose JSON text (inflated) is larger than this, e.g. 16GiB (default: 4 GiB or an "
                    "eighth of the memory this "
                    "process may use, whichever is less)")
        ->transform(byte_size());
}

// -o on every command that prints a result, said one way.
void add_output(Args& x, Commands& c) {
  for (CLI::App* sub : {c.inspect, c.report, c.check, c.diff, c.memory, c.exporter, c.whatif})
    sub->add_option("-o,--output", x.output, "Write the result to FILE instead of stdout (- for stdout)");
}

// The activation formula's shape (a preset gives all but the micro-batch), and the device it must fit.
void add_activation_flags(CLI::App& memory, Args& x) {
  shardscope::cli::MemoryArgs& m = x.m;
  memory.add_option("--seq-len", x.seq_len, "Sequence length s (activations)")->check(between(1, 1 << 24));
  memory.add_option("--micro-batch", x.micro_batch, "Sequences per rank per micro-batch b (activations; default 1)")
      ->check(between(1, 1 << 20));
  memory.add_option("--hidden", x.hidden, "Hidden size h (activations)")->check(between(1, 1 << 20));
  memory.add_option("--layers", x.layers, "Transformer layers L (activations)")->check(between(1, 1 << 16));
  memory.add_option("--heads", x.heads, "Attention heads a (activations)")->check(between(1, 1 << 16));
  memory.add_flag("--checkpointing", m.checkpointing,
                  "Full activation checkpointing: each layer keeps its input, one layer is recomputed");
  memory
      .add_option("--attention", m.attention,
                  "eager: the s² attention scores kept (the formula as published); fused: SDPA flash or "
                  "memory-efficient, FlashAttention, which keep none")
      ->check(CLI::IsMember({"eager", "fused"}));
  memory.add_option("--device", m.device,
                    "H100 (80 GB), H200 (141 GB), B200 (180 GB), MI300X (192 GB), or a capacity in bytes (default "
                    "H100)");
}

void add_memory(CLI::App& app, Args& x, Commands& c) {
  shardscope::cli::MemoryArgs& m = x.m;
  c.memory = app.add_subcommand(
      "memory",
      "The ZeRO memory calculator: model-state bytes per rank for each stage (the model the report predicts with)");
  auto* preset =
      c.memory->add_option("--preset", m.preset, "A trainer preset (its units give the gathered bytes under stage 3)")
          ->check(CLI::IsMember({"tiny", "small", "1b", "8b"}));
  c.params_opt = c.memory->add_option("--params", x.params, "Parameter count (e.g. 7.5e9)")->check(parameter_count(1));
  preset->excludes(c.params_opt);
  c.memory->add_option("--world", m.world, "Ranks in the sharding group (all ranks with --hybrid-shard)")
      ->required()
      ->check(between(1, 1 << 30));
  c.memory->add_option("--stage", x.stage, "ZeRO stage (all four when absent)")->check(between(0, 3));
  c.memory
      ->add_option("--dtype", m.dtype,
                   "The parameters' dtype: bf16 or fp16 (mixed precision, fp32 master: K = 12) or fp32")
      ->check(CLI::IsMember({"bf16", "fp16", "fp32"}));
  c.memory
      ->add_option("--precision", m.precision,
                   "zero: the ZeRO paper's accounting (gradients in the parameters' dtype); fsdp: PyTorch FSDP's and "
                   "shardscope-train's (fp32 gradients)")
      ->check(CLI::IsMember({"zero", "fsdp"}));
  c.memory
      ->add_option("--backward-prefetch", m.backward_prefetch,
                   "pre or post: stage 3 holds two units gathered (the running one and the prefetched one); none: one")
      ->check(CLI::IsMember({"none", "pre", "post"}));
  c.memory
      ->add_option("--hybrid-shard", m.hybrid_shard,
                   "HYBRID_SHARD: shard within nodes of this many ranks, replicate across nodes")
      ->check(between(1, 1 << 30));
  c.largest_opt = c.memory
                      ->add_option("--largest-unit", x.largest_unit,
                                   "Parameters of the largest FSDP unit (gathered while it runs, stage 3)")
                      ->check(parameter_count(0));
  c.root_opt = c.memory->add_option("--root-unit", x.root_unit, "Parameters of the root unit (kept gathered, stage 3)")
                   ->check(parameter_count(0));
  c.memory->add_flag("--offload", m.offload, "Sharded state offloaded to the host (stages 2 and 3)");
  add_activation_flags(*c.memory, x);
  c.memory->add_option("--format", m.format, "Output format")->check(CLI::IsMember({"text", "json"}));

  c.launch = app.add_subcommand(
      "launch", "Start N local ranks with the torchrun variables: shardscope launch -n N -- PROGRAM ARGS...");
  c.launch->add_option("-n,--nproc", x.lo.ranks, "Ranks to start")->required()->check(between(1, 1024));
  c.launch->add_option("--master-port", x.lo.master_port, "MASTER_PORT (default: a free port)")
      ->check(between(1, 65535));
  c.launch->add_option("PROGRAM", x.lo.command, "The program and its arguments, after --")->required();
}

int run_printing(Args& x, const Commands& c, std::ostream& out);

// The parsed command, run: its exit code. Report writes its own result (-o, or each MPI process's share);
// the other commands print to a buffer that goes where -o says once they end, whatever their verdict.
int run(Args& x, const Commands& c) {
  namespace cli = shardscope::cli;
  if (*c.launch) return cli::launch(x.lo);
  // An output over an input would destroy it (`report X -o X`), refused before anything is read.
  std::vector<std::string> inputs = x.paths;
  inputs.insert(inputs.end(), x.files.begin(), x.files.end());
  inputs.insert(inputs.end(), x.diff_runs.begin(), x.diff_runs.end());
  if (const std::string in = cli::input_at(x.output, inputs); !in.empty()) {
    cli::print_error(std::cerr, cli::overwrite_refusal(x.output, in));
    return 2;
  }
  if (*c.report || *c.summarize || *c.exporter) return run_printing(x, c, std::cout);
  std::ostringstream buffer;
  const int rc = run_printing(x, c, buffer);
  if (buffer.view().empty()) return rc;  // nothing made: no file created or emptied
  return cli::write_output(x.output, buffer.str(), std::cout, std::cerr) ? rc : 2;
}

// The command, printing to `out`.
int run_printing(Args& x, const Commands& c, std::ostream& out) {
  namespace cli = shardscope::cli;
  if (*c.inspect) return cli::inspect(x.files, x.format == "json", out, std::cerr);
  // --ranks and --steps, checked before any file is read.
  std::optional<shardscope::report::Selection> sel;
  if (*c.report || *c.check) try {
      sel = shardscope::report::parse_selection(x.ranks_arg, x.steps_arg);
    } catch (const std::invalid_argument& e) {
      cli::print_error(std::cerr, e.what());
      return 2;
    }
  if (*c.report && !x.follow.empty()) return cli::report_follow(x.follow, x.format, x.follow_timeout, out, std::cerr);
  if (*c.report && x.paths.empty() && x.files_per_process.empty()) {
    cli::print_error(std::cerr, "report: PATH is required (or, with --mpi, --files-per-process PATTERN)");
    return 2;
  }
  if (*c.report && x.mpi)
    return cli::report_mpi(x.paths, x.format, x.output, out, std::cerr, x.rules, *sel, x.files_per_process,
                           memory_given(x, c));
  if (*c.report) return cli::report(x.paths, x.format, x.output, out, std::cerr, x.rules, *sel, memory_given(x, c));
  if (*c.check) return cli::check_prefetch(x.paths, x.format, out, std::cerr, x.rules, *sel, x.units, !x.no_whatif);
  if (*c.exporter) return cli::export_perfetto(x.paths, x.output, out, std::cerr, x.rules);
  if (*c.summarize) return cli::summarize(x.paths, x.summary_dir, out, std::cerr, x.rules);
  if (*c.diff) {
    if (!cli::split_sides(x.diff_runs, x.d, std::cerr)) return 2;
    return cli::diff(x.d, out, std::cerr, x.rules);
  }
  if (*c.whatif) return cli::whatif(x.paths, whatif_change(x, c), x.format, out, std::cerr, x.rules);
  if (*c.memory) {
    if (*c.params_opt) x.m.params = x.params;
    if (*c.largest_opt) x.m.largest_unit = x.largest_unit;
    if (*c.root_opt) x.m.root_unit = x.root_unit;
    if (x.stage >= 0) x.m.stage = x.stage;
    for (auto [flag, value, into] : {std::tuple{"--seq-len", x.seq_len, &x.m.seq_len},
                                     {"--micro-batch", x.micro_batch, &x.m.micro_batch},
                                     {"--hidden", x.hidden, &x.m.hidden},
                                     {"--layers", x.layers, &x.m.layers},
                                     {"--heads", x.heads, &x.m.heads}})
      if (c.memory->count(flag)) *into = value;
    return cli::memory(x.m, out, std::cerr);
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"shardscope: profiling and diagnostics for sharded data-parallel training (DDP, ZeRO, FSDP)"};
  app.set_version_flag("--version", "shardscope " SHARDSCOPE_VERSION);
  app.require_subcommand(1);
  // The formats the help names: the registry's (built-in importers, plugins, rank summaries). A plugin that
  // is refused here is named by the command that loads files.
  std::vector<std::string> refusals;
  const std::string formats =
      shardscope::plugins::formats_text(shardscope::analysis::formats_registry(refusals).formats());
  app.footer("Trace formats: " + formats);
  Args x;
  Commands c{};
  add_reading(app, x, c, formats);
  add_memory(app, x, c);
  add_output(x, c);

  // diff A1 A2 -- B1 B2: the runs after "--" are side B. CLI11 would drop the "--", so it becomes a positional
  // of its own that marks where B starts, wherever the options are written.
  std::vector<char*> args(argv, argv + argc);
  std::string side_break(shardscope::cli::kSideBreak);
  if (argc > 1 && std::string_view(argv[1]) == "diff")
    for (size_t i = 2; i < args.size(); ++i)
      if (std::string_view(args[i]) == "--") {
        args[i] = side_break.data();
        break;
      }
  try {
    app.parse(int(args.size()), args.data());
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and usage
    return 2;
  }

  if (x.max_trace_bytes) shardscope::trace::limits().max_text_bytes = x.max_trace_bytes;
  shardscope::cli::set_progress_quiet(x.quiet);
  // Memory freed is kept for the next allocation rather than handed back to come again as fresh pages
  // (after the Kineto text window, the page faults left on a 1 GB trace were the model's and the analysis's
  // blocks going back and forth): blocks below 1 GiB come from the heap, whose top is kept.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  const int rc = run(x, c);
  return shardscope::cli::finish_stdout(std::cout, std::cerr, rc);
}
