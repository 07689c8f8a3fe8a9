#include "training/app/run.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tracer/format/keys.h"
#include "tracer/tracer.h"
#if SHARDSCOPE_HAVE_CUPTI
#include "tracer/cupti/cupti_backend.h"
#endif
#include "training/app/run_config.h"
#include "training/app/stop.h"
#include "training/checkpoint.h"
#include "training/config_check.h"
#include "training/data/data.h"
#include "training/fsdp/allocator_count.h"
#include "training/fsdp/engine.h"
#include "training/optim/adamw.h"

namespace shardscope::train {
namespace {

namespace fs = std::filesystem;
namespace tr = shardscope::tracer;
using json = nlohmann::json;

// Thrown by --fail-at-step in the middle of a step, as a failing step would throw.
struct PlantedFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the steps need, settled before the first.
struct Settled {
  const Args& a;
  const Plan& p;
  std::string who;  // "rank 3: " in a run of several ranks, for every line it prints
  json config;      // the trace header's run_config
  CheckpointConfig ckpt;
  std::string log_path;  // --log-json for this rank; empty: none
};

json bytes_json(const MemoryLedger& mem, bool peak) {
  auto v = [&](Mem m) { return peak ? mem.peak(m) : mem.bytes(m); };
  return {{"sharded_params", v(Mem::ShardedParams)}, {"unsharded_params", v(Mem::UnshardedParams)},
          {"gradients", v(Mem::Gradients)},          {"optimizer_state", v(Mem::OptimizerState)},
          {"activations", v(Mem::Activations)},      {"host_offloaded", v(Mem::HostOffloaded)}};
}

// The counting allocator's bytes under bytes_json's names, and those allocated under no category.
json allocator_json(const AllocatorBytes& b) {
  return {{"sharded_params", b[size_t(Mem::ShardedParams)]},
          {"unsharded_params", b[size_t(Mem::UnshardedParams)]},
          {"gradients", b[size_t(Mem::Gradients)]},
          {"optimizer_state", b[size_t(Mem::OptimizerState)]},
          {"activations", b[size_t(Mem::Activations)]},
          {"host_offloaded", b[size_t(Mem::HostOffloaded)]},
          {"untagged", b[kUntagged]}};
}

// All parameters, fp32, unpadded, unit after unit in sizing::unit_layouts' order: collective (every rank
// takes part), rank 0 writes.
void dump_parameters(Engine& engine, int rank, const char* flag, const std::string& path) {
  torch::Tensor params = engine.full_parameters();
  if (rank != 0) return;
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(params.data_ptr()), std::streamsize(params.numel() * 4));
  out.close();  // what is still buffered fails here on a full disk
  if (!out) throw std::invalid_argument(std::string(flag) + " " + path + ": cannot write");
}

void prepare_process(const Args& a, const FsdpOptions& o) {
  torch::set_num_threads(a.threads);
  if (!o.cuda) retain_freed_host_memory();
  // Tests: the CPU allocator counts the bytes it holds by category beside the ledger's tally, and each
  // --log-json line carries both (allocator_count.h).
  if (const char* count = std::getenv("SHARDSCOPE_TRAIN_COUNT_ALLOCATIONS");
      count && std::string(count) == "1" && !o.cuda)
    count_cpu_allocations();
}

// Before the rendezvous and any allocation: a resume that cannot work is refused at once, by every rank.
void check_resume(const Settled& s) {
  try {
    CheckpointInfo ck = newest_checkpoint(s.a.checkpoint_dir);
    auto diffs = compare_configs(ck.meta.value("config", json::object()), ck.meta.value("run", json::object()),
                                 s.ckpt.config, s.ckpt.run);
    if (std::string layout = describe_differences(diffs, true); !layout.empty())
      throw std::invalid_argument("--resume: " + ck.dir.string() + " was written with a different layout: " + layout +
                                  " (run with the checkpoint's values, or use a new --checkpoint-dir)");
    if (std::string other = describe_differences(diffs, false); !other.empty() && s.p.world.rank == 0) {
      const std::string line =
          "shardscope-train: warning: resuming " + ck.dir.string() + " with changed settings: " + other;
      std::fprintf(stderr, "%s\n", fit_line(line).c_str());
    }
  } catch (const std::exception& e) {
    fail(2, s.who, e.what());
  }
}

// What every rank must agree on: the run's configuration and schedule, and the collectives beside the steps
// (checkpoints, the final parameter dump). Paths may differ between machines; whether one is set may not.
void agree_across_ranks(const Settled& s, Rendezvous& rv) {
  const Args& a = s.a;
  const WorldEnv& world = s.p.world;
  const FsdpOptions& o = s.p.options;
  json agreed = s.config;
  agreed.update(s.ckpt.run);
  if (o.sharding != Sharding::HybridShard) agreed.erase(keys::kCfgRanksPerNode);  // ranks per machine may differ
  agreed["stop_after"] = a.stop_after;
  agreed["save_every"] = a.save_every;
  agreed["resume"] = a.resume;
  agreed["checkpoint_dir"] = a.checkpoint_dir.empty() ? json() : json("set");
  agreed["dump_params"] = a.dump_params.empty() ? json() : json("set");
  agreed["dump_initial_params"] = a.dump_initial_params.empty() ? json() : json("set");
  std::optional<RankMismatch> mismatch;
  try {
    std::vector<int> all(size_t(world.world_size));
    for (int r = 0; r < world.world_size; ++r) all[size_t(r)] = r;
    auto group = make_backend_group(rv, o, "config_check", all);
    mismatch = compare_across_ranks(*group, agreed, o.cuda, o.device);
  } catch (const std::invalid_argument& e) {
    fail(2, s.who, e.what());
  } catch (const std::exception& e) {
    fail(3, s.who,
         std::string("comparing the ranks' configurations failed: ") + e.what() + "; " + rv.diagnose_lost_peer());
  }
  if (mismatch) fail(2, s.who, describe(*mismatch));
}

void start_trace(const Settled& s) {
  const std::string named = "--trace-dir " + s.a.trace_dir;
  try {
    // Checked with the flags (training/app/flags.cc); a folder removed or replaced since is still one line.
    std::error_code ec;
    fs::create_directories(s.a.trace_dir, ec);
    if (ec) throw std::invalid_argument("cannot create the folder (" + ec.message() + ")");
    tr::Options topts{.path = fs::path(s.a.trace_dir) / ("trace.rank" + std::to_string(s.p.world.rank) + ".json.gz"),
                      .rank = s.p.world.rank,
                      .world_size = s.p.world.world_size,
                      .run_config = s.config};
#if SHARDSCOPE_HAVE_CUPTI
    if (s.p.options.cuda) shardscope::tracer::cupti::start(topts);  // host and GPU activity (kernels, NCCL, memory)
    else
      tr::start(topts);
#else
    tr::start(topts);
#endif
    tr::name_this_thread("compute");
  } catch (const std::exception& e) {
    fail(2, s.who, named + ": " + e.what());
  }
}

struct StepResult {
  double loss = 0, norm = 0, lr = 0;
};

// One step inside its range; a step that throws ends its range where it was cut off, marked aborted.
StepResult run_step(const Settled& s, Engine& engine, DataSource& data, const AdamWConfig& opt, int step) {
  const Args& a = s.a;
  const int rank = s.p.world.rank;
  StepResult res;
  begin_step(step, tr::now_ns());
  {
    tr::Range r(keys::kStepRange, {{keys::kArgStep, int64_t(step)}}, keys::kCatStep);
    try {
      torch::Tensor tokens, targets;
      data.batch(step, int64_t(rank) * a.batch, a.batch, tokens, targets);
      if (s.p.options.cuda) {
        tokens = tokens.to(torch::Device(torch::kCUDA, int16_t(s.p.options.device)));
        targets = targets.to(tokens.device());
      }
      res.loss = engine.forward_backward(tokens, targets);
      if (step == a.fail_at_step && (a.fail_rank < 0 || a.fail_rank == rank))
        throw PlantedFailure("planted failure (--fail-at-step " + std::to_string(step) + ")");
      tr::Range phase(keys::kOptimizerPhase, keys::kCatPhase);
      res.norm = engine.clip_grad_norm(a.max_grad_norm);
      res.lr = learning_rate(opt, step);
      adamw_update_all(engine.units(), res.lr, step + 1, opt);
      engine.after_optimizer();
    } catch (const std::exception& e) {
      // A signal from now on has no step to mark.
      if (end_step()) {
        const std::string reason = short_reason(e.what());
        r.add({keys::kArgAborted, tr::intern(reason)});
        report_aborted(step, rank, reason);
      }
      throw;
    }
  }
  end_step();
  return res;
}

// The step's line on stdout (rank 0) and in --log-json.
void report_step(const Settled& s, std::ofstream& log, const MemoryLedger& mem, int step, const StepResult& res,
                 double secs) {
  const int64_t global_batch = int64_t(s.a.batch) * s.p.world.world_size;
  const double tokens_per_s = double(global_batch * s.a.model.seq_len) / secs;
  if (s.p.world.rank == 0)
    std::printf("step %d loss %.6f grad_norm %.4f lr %.3g step_time %.3f s tokens/s %.0f\n", step, res.loss, res.norm,
                res.lr, secs, tokens_per_s);
  if (!log.is_open()) return;
  json line{{"step", step},
            {"loss", res.loss},
            {"grad_norm", res.norm},
            {"lr", res.lr},
            {"step_time_s", secs},
            {"tokens_per_s", tokens_per_s},
            {"rank", s.p.world.rank},
            {"peak_bytes", bytes_json(mem, true)},
            {"end_bytes", bytes_json(mem, false)}};
  if (counting_cpu_allocations()) {
    line["allocator_peak_bytes"] = allocator_json(allocator_peaks());
    line["allocator_end_bytes"] = allocator_json(allocator_bytes());
  }
  log << line.dump() << "\n" << std::flush;
  // A full disk (or /dev/full) fails here, at the flush: one line naming the file, not a silent run.
  if (!log) throw std::invalid_argument("--log-json " + s.log_path + ": cannot write (" + std::strerror(errno) + ")");
}

void train(const Settled& s, DataSource& data, Rendezvous& rv) {
  const Args& a = s.a;
  const int rank = s.p.world.rank;
  MemoryLedger mem;
  mem.set_gpu(s.p.options.cuda, s.p.options.device);
  Engine engine(a.model, s.p.options, rv, a.seed, mem);
  AdamWConfig opt;
  opt.lr = a.lr;
  opt.total_steps = a.steps;
  opt.warmup_steps = s.ckpt.warmup;
  int first_step = 0;
  if (a.resume) {
    if (auto step = load_checkpoint(a.checkpoint_dir, engine, rank, s.p.world.world_size, s.ckpt.config))
      first_step = *step + 1;
    if (rank == 0) std::printf("resuming at step %d\n", first_step);
  }
  // What the first step starts from (after a resume's load).
  if (!a.dump_initial_params.empty()) dump_parameters(engine, rank, "--dump-initial-params", a.dump_initial_params);
  auto barrier = [&] { engine.barrier(); };
  std::ofstream log;
  if (!s.log_path.empty()) {
    log.open(s.log_path, a.resume ? std::ios::app : std::ios::trunc);
    if (!log) throw std::invalid_argument("--log-json " + s.log_path + ": cannot open");
  }
  const int end_step = a.stop_after >= 0 ? std::min(a.steps, a.stop_after) : a.steps;
  for (int step = first_step; step < end_step; ++step) {
    auto t0 = std::chrono::steady_clock::now();
    mem.reset_peaks();
    if (counting_cpu_allocations()) reset_allocator_peaks();
    const StepResult res = run_step(s, engine, data, opt, step);
    report_step(s, log, mem, step, res, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    const bool last = step + 1 == end_step;
    if (!a.checkpoint_dir.empty() &&
        ((a.save_every > 0 && (step + 1) % a.save_every == 0) || (last && a.save_every == 0)))
      save_checkpoint(a.checkpoint_dir, step, engine, rank, s.p.world.world_size, s.ckpt.config, barrier, s.ckpt.run);
    // No tracer::flush() here: the session's flusher thread writes every flush interval. Flushed on this thread,
    // a traced 1b bf16 step on an H200 was followed by 94-139 ms of draining CUPTI and writing, with the GPU idle,
    // outside the step's own time.
  }
  if (log.is_open()) {
    log.close();
    if (log.fail())
      throw std::invalid_argument("--log-json " + s.log_path + ": cannot write (" + std::strerror(errno) + ")");
  }
  if (!a.dump_params.empty()) dump_parameters(engine, rank, "--dump-params", a.dump_params);
}

}  // namespace

void run(const Args& a, const Plan& p) {
  const WorldEnv& world = p.world;
  Settled s{.a = a, .p = p, .who = world.world_size > 1 ? "rank " + std::to_string(world.rank) + ": " : ""};
  prepare_process(a, p.options);
  std::unique_ptr<DataSource> data;
  try {
    data = make_data(a.data, a.model.vocab, a.model.seq_len, a.seed);
  } catch (const std::exception& e) {
    fail(2, s.who, e.what());
  }
  s.config = run_config(a, p.options, world, p.shard_size);
  s.ckpt = checkpoint_config(a, s.config);
  if (a.resume) check_resume(s);
  std::unique_ptr<Rendezvous> rv;
  try {
    rv = std::make_unique<Rendezvous>(world, std::chrono::seconds(a.rendezvous_timeout_s));
  } catch (const std::exception& e) {
    fail(2, s.who, e.what());
  }
  if (world.world_size > 1) agree_across_ranks(s, *rv);
  if (!a.trace_dir.empty()) start_trace(s);
  s.log_path = a.log_json;
  if (auto at = s.log_path.find("{rank}"); at != std::string::npos)
    s.log_path.replace(at, 6, std::to_string(world.rank));
  else if (world.rank != 0)
    s.log_path.clear();
  set_stop_context(s.who, s.log_path, tr::this_thread_track());
  watch_stop_signals(world.rank);
  try {
    train(s, *data, *rv);
  } catch (const std::invalid_argument& e) {
    fail(2, s.who, e.what());
  } catch (const PlantedFailure& e) {
    fail(3, s.who, e.what());
  } catch (const std::exception& e) {
    if (world.world_size == 1) fail(3, s.who, "training failed: " + short_reason(e.what()));  // no peers to name
    std::string diagnosis = rv->diagnose_lost_peer();
    if (rv->hosts_store()) {
      tr::stop();
      std::this_thread::sleep_for(std::chrono::seconds(5));  // the store lives in this process: let peers read it
    }
    fail(3, s.who, "a collective failed: " + short_reason(e.what()) + "; " + diagnosis);
  }
  tr::stop();
  std::fflush(stdout);
  _exit(0);  // skip static destructors of libtorch and gloo threads; everything is written
}

}  // namespace shardscope::train
