// shardscope-train: a decoder-only transformer trained with FSDP/ZeRO sharding on libtorch, every
// all-gather, reduce-scatter and prefetch traced. Ranks meet by the torchrun environment variables.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "sizing/presets.h"
#include "sizing/zero_model.h"
#include "tracer/format/keys.h"
#include "tracer/format/run_shape.h"
#include "tracer/tracer.h"
#if SHARDSCOPE_HAVE_CUPTI
#include "tracer/cupti/cupti_backend.h"
#endif
#if SHARDSCOPE_TRAIN_NCCL
#include <cuda_runtime_api.h>
#include <torch/cuda.h>
#endif
#include "training/checkpoint.h"
#include "training/config_check.h"
#include "training/data/data.h"
#include "training/fsdp/allocator_count.h"
#include "training/fsdp/engine.h"
#include "training/optim/adamw.h"
#include "training/preflight.h"

namespace fs = std::filesystem;
namespace tr = shardscope::tracer;
namespace keys = shardscope::keys;
namespace sizing = shardscope::sizing;
using namespace shardscope::train;
using json = nlohmann::json;

namespace {

struct Args {
  std::string preset = "tiny";
  sizing::ModelConfig model;
  std::string data = "synthetic", device = "cpu", sharding = "full_shard", prefetch = "pre";
  std::string param_dtype = "fp32", reduce_dtype = "fp32";
  int stop_after = -1;
  int steps = 10, batch = 2, warmup = -1, limit_all_gathers = 2, ranks_per_node = 0, save_every = 0, threads = 1;
  double lr = 3e-3, max_grad_norm = 1.0;
  uint64_t seed = 0;
  bool forward_prefetch = false, checkpointing = false, cpu_offload = false, resume = false;
  std::string checkpoint_dir, trace_dir, log_json, dump_params, dump_initial_params;
  int rendezvous_timeout_s = 60;
  int collective_timeout_s = 0;
  int slow_rank = -1, slow_rank_ms = 0;
  int fail_at_step = -1, fail_rank = -1;  // testing: a planted failure
};

// Thrown by --fail-at-step in the middle of a step, as a failing step would throw.
struct PlantedFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The step in progress, for a signal that stops the rank in the middle of it (-1: none).
std::atomic<int> g_step{-1};
std::atomic<int64_t> g_step_start_ns{0};
uint32_t g_compute_track = 0;
std::string g_who, g_log_path;  // set before any signal is watched
int g_signal_pipe[2] = {-1, -1};

// The rank's own record of a step that did not complete: a line on stdout beside the step lines, and one
// in --log-json.
void report_aborted(int step, int rank, const std::string& reason) {
  std::printf("%sstep %d aborted: %s\n", g_who.c_str(), step, reason.c_str());
  std::fflush(stdout);
  if (!g_log_path.empty()) {
    std::ofstream log(g_log_path, std::ios::app);
    log << json{{"step", step}, {"rank", rank}, {"aborted", reason}}.dump() << "\n";
  }
}

void on_stop_signal(int sig) {
  const unsigned char c = static_cast<unsigned char>(sig);
  [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &c, 1);
}

// SIGTERM (a launcher stopping the group) or SIGINT: the step in progress is recorded as aborted, the trace
// is closed, and the signal then ends the process as it would have. On a thread of its own, since a signal
// handler may neither record nor print.
void watch_stop_signals(int rank) {
  unsigned char c = 0;
  while (read(g_signal_pipe[0], &c, 1) < 0 && errno == EINTR) {}
  const int sig = c;
  const std::string reason = std::string("stopped by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM");
  if (const int step = g_step.exchange(-1); step >= 0) {
    tr::complete(g_compute_track, keys::kStepRange, keys::kCatStep, g_step_start_ns.load(), tr::now_ns(),
                 {{keys::kArgStep, int64_t(step)}, {keys::kArgAborted, tr::intern(reason)}});
    report_aborted(step, rank, reason);
  }
  tr::stop();
  std::fflush(stdout);
  std::fflush(stderr);
  signal(sig, SIG_DFL);
  raise(sig);
}

std::string first_line(std::string s) {
  if (auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  return s;
}

[[noreturn]] void fail(int code, const std::string& rank_prefix, const std::string& msg) {
  std::fprintf(stderr, "shardscope-train: %serror: %s\n", rank_prefix.c_str(), msg.c_str());
  tr::stop();  // whatever was recorded reaches the file
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);  // comm threads may be blocked in a collective: do not wait for them
}

json run_config(const Args& a, const FsdpOptions& o, const WorldEnv& w, int shard_size) {
  const sizing::ModelConfig& m = a.model;
  shardscope::trace::RunShape shape{
      .given = true,
      .sharding = sharding_name(o.sharding),
      .backward_prefetch = prefetch_name(o.backward_prefetch),
      .forward_prefetch = o.forward_prefetch,
      .limit_all_gathers = o.limit_all_gathers,
      .param_dtype = dtype_name(o.param_dtype),
      .reduce_dtype = dtype_name(o.reduce_dtype),
      .world_size = w.world_size,
      .ranks_per_node = o.sharding == Sharding::HybridShard ? o.ranks_per_node : w.local_world_size,
      .activation_checkpointing = o.activation_checkpointing,
      .cpu_offload = a.cpu_offload,
      .batch_size = double(a.batch),
      .model = {double(m.layers), double(m.dim), double(m.heads), double(m.seq_len)}};
  for (const sizing::UnitLayout& u : sizing::unit_layouts(a.model))
    shape.units.push_back({u.id, u.name, double(u.numel), double(sizing::padded_numel(u.numel, shard_size))});
  // The shape the analysis parses back (tracer/format/run_shape.h), then what only the trainer knows.
  json cfg = shardscope::trace::to_json(shape);
  cfg["shard_size"] = shard_size;
  cfg[keys::kCfgOptimizer] = "adamw";
  cfg["device"] = a.device;
  json& model = cfg[keys::kCfgModel];
  model["preset"] = m.preset;
  model["kv_heads"] = m.kv_heads;
  model["ffn_dim"] = m.ffn_dim;
  model["vocab"] = m.vocab;
  model["params"] = sizing::parameter_count(m);
  // The same on every rank, so that the ranks' headers agree.
  if (a.slow_rank >= 0)
    cfg[keys::kCfgPlantedDelay] = {{keys::kRank, a.slow_rank}, {keys::kCfgPlantedDelayMs, a.slow_rank_ms}};
  return cfg;
}

// The value as the user would write it back: 0.003, not 0.003000.
std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void at_least(const char* flag, int value, int min, bool unset = false) {
  if (!unset && value < min)
    throw std::invalid_argument(std::string(flag) + " must be at least " + std::to_string(min) + " (got " +
                                std::to_string(value) + ")");
}

void at_most(const char* flag, int64_t value, int64_t max) {
  if (value > max)
    throw std::invalid_argument(std::string(flag) + " must be at most " + std::to_string(max) + " (got " +
                                std::to_string(value) + ")");
}

void finite(const char* flag, double value) {
  if (!std::isfinite(value))
    throw std::invalid_argument(std::string(flag) + " must be a finite number (got " + number(value) + ")");
}

// A flag's text as given, on one line and not too long for it.
std::string shown_text(std::string s) {
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

// --checkpoint-dir, before anything is trained: a folder, made now when missing, where files can be made.
// Otherwise the first save fails after the training it was to keep.
void check_checkpoint_dir(const std::string& dir) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(st))
    throw std::invalid_argument("--checkpoint-dir " + dir + " is not a folder");
  if (!fs::exists(st)) {
    fs::create_directories(dir, ec);
    if (ec)
      throw std::invalid_argument("--checkpoint-dir " + dir + ": cannot create the folder (" + ec.message() + ")");
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    throw std::invalid_argument("--checkpoint-dir " + dir + ": cannot write in the folder (" + std::strerror(errno) +
                                ")");
}

// --seed: digits only (no sign, exponent or fraction), at most 2^64-1.
uint64_t parse_seed(const std::string& text) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  const bool digits =
      !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (auto [p, ec] = std::from_chars(text.data(), end, v); !digits || ec != std::errc() || p != end)
    throw std::invalid_argument("--seed must be a whole number from 0 to 18446744073709551615 (got " +
                                shown_text(text) + ")");
  return v;
}

// MemAvailable from /proc/meminfo, in bytes; 0 when it cannot be read.
double available_host_bytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    double kb = 0;
    in >> kb;
    if (key == "MemAvailable:") return kb * 1024;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

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

}  // namespace

int main(int argc, char** argv) {
  // Step lines go out as they are printed, on a pipe too: a launcher shows progress, and a rank stopped
  // mid-run has lost none of them.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Args a;
  CLI::App app{"shardscope-train: FSDP / ZeRO training of a decoder-only transformer, traced"};
  app.add_option("--preset", a.preset, "tiny (~1M params), small (~125M), 1b, 8b")
      ->check(CLI::IsMember({"tiny", "small", "1b", "8b"}));
  auto* layers = app.add_option("--layers", a.model.layers, "Transformer blocks (overrides the preset)");
  auto* dim = app.add_option("--dim", a.model.dim, "Model width");
  auto* heads = app.add_option("--heads", a.model.heads, "Attention heads");
  auto* kv_heads = app.add_option("--kv-heads", a.model.kv_heads, "Key/value heads (grouped-query attention)");
  auto* ffn = app.add_option("--ffn-dim", a.model.ffn_dim, "SwiGLU hidden width");
  auto* vocab = app.add_option("--vocab", a.model.vocab, "Vocabulary size");
  auto* seq = app.add_option("--seq-len", a.model.seq_len, "Sequence length");
  app.add_option("--data", a.data, "'synthetic', or a text file read as byte tokens");
  app.add_option("--steps", a.steps, "Training steps");
  auto* stop_after = app.add_option("--stop-after", a.stop_after,
                                    "Stop after this many steps, as if interrupted (the schedule still spans --steps)");
  app.add_option("--batch-size", a.batch, "Sequences per rank per step");
  app.add_option("--lr", a.lr, "Peak learning rate");
  auto* warmup_opt = app.add_option("--warmup", a.warmup, "Warmup steps (default: a tenth of --steps)");
  app.add_option("--max-grad-norm", a.max_grad_norm, "Global gradient-norm clip (0: off)");
  // Read as text: CLI11 stores -1, 2^64 and 1e20 in a uint64_t as UINT64_MAX without a word.
  std::string seed_text = "0";
  app.add_option("--seed", seed_text, "Initialization and data seed (a whole number from 0 to 2^64-1)");
  app.add_option("--device", a.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--sharding", a.sharding, "no_shard | zero1 | shard_grad_op | full_shard | hybrid_shard");
  app.add_option("--backward-prefetch", a.prefetch, "none | pre | post");
  app.add_flag("--forward-prefetch", a.forward_prefetch, "Issue the next unit's all-gather before this unit's forward");
  app.add_option("--limit-all-gathers", a.limit_all_gathers, "All-gathers in flight at most");
  auto* ranks_per_node =
      app.add_option("--ranks-per-node", a.ranks_per_node, "hybrid_shard: ranks in one sharding group");
  app.add_option("--param-dtype", a.param_dtype, "fp32 | bf16");
  app.add_option("--reduce-dtype", a.reduce_dtype, "fp32 | bf16");
  app.add_flag("--activation-checkpointing", a.checkpointing, "Recompute each block's forward in backward");
  app.add_flag("--cpu-offload", a.cpu_offload, "Keep sharded state on the host (GPU runs)");
  app.add_option("--checkpoint-dir", a.checkpoint_dir, "Where checkpoints go");
  app.add_option("--save-every", a.save_every, "Checkpoint every N steps (0: only at the end when --checkpoint-dir)");
  app.add_flag("--resume", a.resume, "Continue from the newest checkpoint in --checkpoint-dir");
  app.add_option("--trace-dir", a.trace_dir, "Write one trace file per rank here");
  app.add_option("--log-json", a.log_json, "One JSON line per step (rank 0; '{rank}' in the name: every rank)");
  app.add_option("--dump-params", a.dump_params, "After training, rank 0 writes all parameters (fp32, raw) here");
  app.add_option(
      "--dump-initial-params", a.dump_initial_params,
      "Before the first step, rank 0 writes all parameters (fp32, raw) here (a reference run starts from them)");
  auto* slow_rank = app.add_option(
      "--slow-rank", a.slow_rank,
      "A planted straggler for checking diagnostics: this rank sleeps --slow-rank-ms before each unit's backward");
  app.add_option("--slow-rank-ms", a.slow_rank_ms, "Milliseconds --slow-rank sleeps before each unit's backward");
  auto* fail_at_step =
      app.add_option("--fail-at-step", a.fail_at_step, "Testing: throw in the middle of this step")->group("");
  auto* fail_rank =
      app.add_option("--fail-rank", a.fail_rank, "Testing: the rank --fail-at-step fails (default: every rank)")
          ->group("");
  app.add_option("--threads", a.threads, "Intra-op threads per rank");
  app.add_option("--rendezvous-timeout", a.rendezvous_timeout_s, "Seconds to wait for every rank");
  auto* collective_timeout = app.add_option(
      "--collective-timeout", a.collective_timeout_s,
      "Seconds a collective may take from its issue before the run stops (default 30 on CPU, 300 on a GPU)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }

  WorldEnv world;
  FsdpOptions o;
  int shard_size = 1;
  try {
    // Checked here rather than by CLI11's ranges, whose messages print the bounds of a double (309 digits).
    at_least("--steps", a.steps, 1);
    at_least("--batch-size", a.batch, 1);
    // An unset flag's sentinel (-1) is not a value a user may give.
    at_least("--stop-after", a.stop_after, 1, !*stop_after);
    if (!(a.lr > 0)) throw std::invalid_argument("--lr must be greater than 0 (got " + number(a.lr) + ")");
    finite("--lr", a.lr);  // inf would train to nan
    // The optimizer computes in float: a larger rate is inf there (and fails in the first step).
    if (a.lr > double(FLT_MAX))
      throw std::invalid_argument("--lr must be at most " + number(FLT_MAX) + ", a float's range (got " + number(a.lr) +
                                  ")");
    a.seed = parse_seed(seed_text);
    if (!(a.max_grad_norm >= 0))
      throw std::invalid_argument("--max-grad-norm must be 0 (off) or more (got " + number(a.max_grad_norm) + ")");
    finite("--max-grad-norm", a.max_grad_norm);
    at_least("--warmup", a.warmup, 0, !*warmup_opt);
    at_least("--limit-all-gathers", a.limit_all_gathers, 1);
    at_least("--save-every", a.save_every, 0);
    at_least("--ranks-per-node", a.ranks_per_node, 1, !*ranks_per_node);
    at_least("--threads", a.threads, 1);
    // More intra-op threads than CPUs only contend; tens of thousands never finish starting.
    at_most("--threads", a.threads, std::max(1u, std::thread::hardware_concurrency()));
    at_least("--rendezvous-timeout", a.rendezvous_timeout_s, 1);
    at_most("--rendezvous-timeout", a.rendezvous_timeout_s, 86'400);
    at_least("--collective-timeout", a.collective_timeout_s, 1, !*collective_timeout);
    at_most("--collective-timeout", a.collective_timeout_s, 86'400);
    at_least("--fail-at-step", a.fail_at_step, 0, !*fail_at_step);
    at_least("--fail-rank", a.fail_rank, 0, !*fail_rank);
    at_least("--slow-rank", a.slow_rank, 0, !*slow_rank);
    at_least("--slow-rank-ms", a.slow_rank_ms, 0);
    if (a.slow_rank_ms > 60'000)
      throw std::invalid_argument("--slow-rank-ms must be at most 60000 (got " + std::to_string(a.slow_rank_ms) + ")");
    world = read_world_env();
    sizing::ModelConfig base = sizing::preset(a.preset);
    auto keep = [](CLI::Option* opt, int64_t& field, int64_t preset_value) {
      if (!*opt) field = preset_value;
    };
    keep(layers, a.model.layers, base.layers), keep(dim, a.model.dim, base.dim), keep(heads, a.model.heads, base.heads);
    keep(ffn, a.model.ffn_dim, base.ffn_dim), keep(vocab, a.model.vocab, base.vocab),
        keep(seq, a.model.seq_len, base.seq_len);
    if (!*kv_heads) a.model.kv_heads = *heads ? a.model.heads : base.kv_heads;
    a.model.preset = (*layers || *dim || *heads || *kv_heads || *ffn || *vocab || *seq) ? "custom" : a.preset;
    sizing::validate(a.model);
    o.sharding = parse_sharding(a.sharding);
    o.backward_prefetch = parse_prefetch(a.prefetch);
    o.forward_prefetch = a.forward_prefetch;
    o.limit_all_gathers = a.limit_all_gathers;
    o.param_dtype = parse_dtype(a.param_dtype);
    o.reduce_dtype = parse_dtype(a.reduce_dtype);
    o.activation_checkpointing = a.checkpointing;
    o.ranks_per_node = a.ranks_per_node;
    o.collective_timeout_s = a.collective_timeout_s;
    if (a.slow_rank >= 0 && a.slow_rank >= world.world_size)
      throw std::invalid_argument("--slow-rank " + std::to_string(a.slow_rank) + ": the run has ranks 0 to " +
                                  std::to_string(world.world_size - 1));
    if (a.slow_rank == world.rank) o.backward_delay_ms = a.slow_rank_ms;
    if (a.device == "cuda") {
#if SHARDSCOPE_TRAIN_NCCL
      if (torch::cuda::device_count() == 0)
        throw std::invalid_argument(
            "--device cuda: no CUDA device is visible (or this libtorch was built without CUDA)");
      o.cuda = true;
      o.device = world.local_rank % int(torch::cuda::device_count());
      cudaSetDevice(o.device);
#else
      throw std::invalid_argument("--device cuda: this build has no NCCL/CUDA backend (CPU and Gloo only)");
#endif
    }
    if (a.cpu_offload) {
      // SHARDSCOPE_TRAIN_OFFLOAD_ON_CPU lets tests run the offload path with the host as the training device
      // too: the same copies and bookkeeping, without a GPU.
      const char* on_cpu = std::getenv("SHARDSCOPE_TRAIN_OFFLOAD_ON_CPU");
      if (a.device != "cuda" && !(on_cpu && std::string(on_cpu) == "1"))
        throw std::invalid_argument("--cpu-offload moves sharded state from a GPU to the host; it needs --device cuda");
      if (zero_stage(o.sharding) < 2)
        throw std::invalid_argument(
            "--cpu-offload offloads sharded state: use --sharding shard_grad_op, full_shard or hybrid_shard (got " +
            a.sharding + ")");
      o.cpu_offload = true;
    }
    if (o.sharding == Sharding::HybridShard && (a.ranks_per_node < 1 || world.world_size % a.ranks_per_node != 0))
      throw std::invalid_argument(
          "hybrid_shard needs --ranks-per-node dividing WORLD_SIZE=" + std::to_string(world.world_size) +
          (a.ranks_per_node ? " (got " + std::to_string(a.ranks_per_node) + ")" : " (none given)"));
    if (a.resume && a.checkpoint_dir.empty()) throw std::invalid_argument("--resume needs --checkpoint-dir");
    if (!a.checkpoint_dir.empty() && !a.resume) check_checkpoint_dir(a.checkpoint_dir);
    shard_size = o.sharding == Sharding::NoShard       ? 1
                 : o.sharding == Sharding::HybridShard ? a.ranks_per_node
                                                       : world.world_size;
    // Before the unit table, the data or any tensor: counts in checked arithmetic, then the host's memory.
    check_run_fits({.model = a.model,
                    .batch = a.batch,
                    .shard_size = shard_size,
                    .stage = zero_stage(o.sharding),
                    .param_dtype = a.param_dtype,
                    .offload = a.cpu_offload,
                    .prefetching = o.backward_prefetch != BackwardPrefetch::None,
                    .forward_prefetch = o.forward_prefetch,
                    .checkpointing = o.activation_checkpointing},
                   !o.cuda, available_host_bytes(), world.local_world_size);
    // Within what memory allows, tiny blocks could still be numerous enough to exhaust it in bookkeeping.
    at_most("--layers", a.model.layers, 100'000);
  } catch (const std::exception& e) {
    fail(2, "", e.what());
  }
  const std::string who = world.world_size > 1 ? "rank " + std::to_string(world.rank) + ": " : "";
  torch::set_num_threads(a.threads);
  if (!o.cuda) retain_freed_host_memory();
  // Tests: the CPU allocator counts the bytes it holds by category beside the ledger's tally, and each
  // --log-json line carries both (allocator_count.h).
  if (const char* count = std::getenv("SHARDSCOPE_TRAIN_COUNT_ALLOCATIONS");
      count && std::string(count) == "1" && !o.cuda)
    count_cpu_allocations();

  std::unique_ptr<DataSource> data;
  try {
    data = make_data(a.data, a.model.vocab, a.model.seq_len, a.seed);
  } catch (const std::exception& e) {
    fail(2, who, e.what());
  }

  const json config = run_config(a, o, world, shard_size);
  json ckpt_config = config;
  ckpt_config.erase(keys::kCfgBackwardPrefetch);  // the schedule, not the state: a resume may change it
  ckpt_config.erase(keys::kCfgForwardPrefetch);
  ckpt_config.erase(keys::kCfgLimitAllGathers);
  const int warmup = a.warmup >= 0 ? a.warmup : std::max(1, a.steps / 10);
  const json ckpt_run = {
      {"steps", a.steps}, {"lr", a.lr}, {"seed", a.seed}, {"warmup", warmup}, {"max_grad_norm", a.max_grad_norm},
      {"data", a.data}};
  if (a.resume) {
    // Before the rendezvous and any allocation: a resume that cannot work is refused at once, by every rank.
    try {
      CheckpointInfo ck = newest_checkpoint(a.checkpoint_dir);
      auto diffs = compare_configs(ck.meta.value("config", json::object()), ck.meta.value("run", json::object()),
                                   ckpt_config, ckpt_run);
      if (std::string layout = describe_differences(diffs, true); !layout.empty())
        throw std::invalid_argument("--resume: " + ck.dir.string() + " was written with a different layout: " + layout +
                                    " (run with the checkpoint's values, or use a new --checkpoint-dir)");
      if (std::string other = describe_differences(diffs, false); !other.empty() && world.rank == 0)
        std::fprintf(stderr, "shardscope-train: warning: resuming %s with changed settings: %s\n", ck.dir.c_str(),
                     other.c_str());
    } catch (const std::exception& e) {
      fail(2, who, e.what());
    }
  }

  std::unique_ptr<Rendezvous> rv;
  try {
    rv = std::make_unique<Rendezvous>(world, std::chrono::seconds(a.rendezvous_timeout_s));
  } catch (const std::exception& e) {
    fail(2, who, e.what());
  }
  if (world.world_size > 1) {
    // What every rank must agree on: the run's configuration and schedule, and the collectives beside the
    // steps (checkpoints, the final parameter dump). Paths may differ between machines; whether one is set may not.
    json agreed = config;
    agreed.update(ckpt_run);
    if (o.sharding != Sharding::HybridShard) agreed.erase(keys::kCfgRanksPerNode);  // ranks per machine may differ
    agreed["stop_after"] = a.stop_after;
    agreed["save_every"] = a.save_every;
    agreed["resume"] = a.resume;
    agreed["checkpoint_dir"] = a.checkpoint_dir.empty() ? json() : json("set");
    agreed["dump_params"] = a.dump_params.empty() ? json() : json("set");
    agreed["dump_initial_params"] = a.dump_initial_params.empty() ? json() : json("set");
    std::optional<RankMismatch> mismatch;
    try {
      auto group = make_backend_group(*rv, o, "config_check", [&] {
        std::vector<int> all(size_t(world.world_size));
        for (int r = 0; r < world.world_size; ++r) all[size_t(r)] = r;
        return all;
      }());
      mismatch = compare_across_ranks(*group, agreed, o.cuda, o.device);
    } catch (const std::invalid_argument& e) {
      fail(2, who, e.what());
    } catch (const std::exception& e) {
      fail(3, who,
           std::string("comparing the ranks' configurations failed: ") + e.what() + "; " + rv->diagnose_lost_peer());
    }
    if (mismatch) fail(2, who, describe(*mismatch));
  }
  if (!a.trace_dir.empty()) {
    try {
      fs::create_directories(a.trace_dir);
      tr::Options topts{.path = fs::path(a.trace_dir) / ("trace.rank" + std::to_string(world.rank) + ".json.gz"),
                        .rank = world.rank,
                        .world_size = world.world_size,
                        .run_config = config};
#if SHARDSCOPE_HAVE_CUPTI
      if (o.cuda) shardscope::tracer::cupti::start(topts);  // host and GPU activity (kernels, NCCL, memory)
      else
        tr::start(topts);
#else
      tr::start(topts);
#endif
      tr::name_this_thread("compute");
    } catch (const std::exception& e) {
      fail(2, who, std::string("--trace-dir: ") + e.what());
    }
  }

  g_who = who;
  g_log_path = a.log_json;
  if (auto p = g_log_path.find("{rank}"); p != std::string::npos) g_log_path.replace(p, 6, std::to_string(world.rank));
  else if (world.rank != 0)
    g_log_path.clear();
  g_compute_track = tr::this_thread_track();
  if (pipe2(g_signal_pipe, O_CLOEXEC) == 0) {
    std::thread(watch_stop_signals, world.rank).detach();
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
  }
  try {
    MemoryLedger mem;
    mem.set_gpu(o.cuda, o.device);
    Engine engine(a.model, o, *rv, a.seed, mem);
    AdamWConfig opt;
    opt.lr = a.lr;
    opt.total_steps = a.steps;
    opt.warmup_steps = warmup;

    int first_step = 0;
    if (a.resume) {
      if (auto step = load_checkpoint(a.checkpoint_dir, engine, world.rank, ckpt_config)) first_step = *step + 1;
      if (world.rank == 0) std::printf("resuming at step %d\n", first_step);
    }
    // What the first step starts from (after a resume's load).
    if (!a.dump_initial_params.empty())
      dump_parameters(engine, world.rank, "--dump-initial-params", a.dump_initial_params);
    auto barrier = [&] { engine.barrier(); };

    std::ofstream log;
    const std::string& log_path = g_log_path;
    if (!log_path.empty()) {
      log.open(log_path, a.resume ? std::ios::app : std::ios::trunc);
      if (!log) throw std::invalid_argument("--log-json " + log_path + ": cannot open");
    }

    const int64_t global_batch = int64_t(a.batch) * world.world_size;
    const int end_step = a.stop_after >= 0 ? std::min(a.steps, a.stop_after) : a.steps;
    for (int step = first_step; step < end_step; ++step) {
      auto t0 = std::chrono::steady_clock::now();
      mem.reset_peaks();
      if (counting_cpu_allocations()) reset_allocator_peaks();
      double loss, norm, lr;
      g_step_start_ns = tr::now_ns();
      g_step = step;
      {
        tr::Range r(keys::kStepRange, {{keys::kArgStep, int64_t(step)}}, keys::kCatStep);
        try {
          torch::Tensor tokens, targets;
          data->batch(step, int64_t(world.rank) * a.batch, a.batch, tokens, targets);
          if (o.cuda) {
            tokens = tokens.to(torch::Device(torch::kCUDA, int16_t(o.device)));
            targets = targets.to(tokens.device());
          }
          loss = engine.forward_backward(tokens, targets);
          if (step == a.fail_at_step && (a.fail_rank < 0 || a.fail_rank == world.rank))
            throw PlantedFailure("planted failure (--fail-at-step " + std::to_string(step) + ")");
          tr::Range phase(keys::kOptimizerPhase, keys::kCatPhase);
          norm = engine.clip_grad_norm(a.max_grad_norm);
          lr = learning_rate(opt, step);
          for (auto& u : engine.units()) adamw_update(*u, lr, step + 1, opt);
          engine.after_optimizer();
        } catch (const std::exception& e) {
          // The step's range ends here, where it was cut off, marked; a signal from now on has no step to mark.
          if (g_step.exchange(-1) >= 0) {
            const std::string reason = first_line(e.what());
            r.add({keys::kArgAborted, tr::intern(reason)});
            report_aborted(step, world.rank, reason);
          }
          throw;
        }
      }
      g_step = -1;
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double tokens_per_s = double(global_batch * a.model.seq_len) / secs;
      if (world.rank == 0)
        std::printf("step %d loss %.6f grad_norm %.4f lr %.3g step_time %.3f s tokens/s %.0f\n", step, loss, norm, lr,
                    secs, tokens_per_s);
      if (log.is_open()) {
        json line{{"step", step},
                  {"loss", loss},
                  {"grad_norm", norm},
                  {"lr", lr},
                  {"step_time_s", secs},
                  {"tokens_per_s", tokens_per_s},
                  {"rank", world.rank},
                  {"peak_bytes", bytes_json(mem, true)},
                  {"end_bytes", bytes_json(mem, false)}};
        if (counting_cpu_allocations()) {
          line["allocator_peak_bytes"] = allocator_json(allocator_peaks());
          line["allocator_end_bytes"] = allocator_json(allocator_bytes());
        }
        log << line.dump() << "\n" << std::flush;
        // A full disk (or /dev/full) fails here, at the flush: one line naming the file, not a silent run.
        if (!log)
          throw std::invalid_argument("--log-json " + log_path + ": cannot write (" + std::strerror(errno) + ")");
      }
      bool last = step + 1 == end_step;
      if (!a.checkpoint_dir.empty() &&
          ((a.save_every > 0 && (step + 1) % a.save_every == 0) || (last && a.save_every == 0)))
        save_checkpoint(a.checkpoint_dir, step, engine, world.rank, ckpt_config, barrier, ckpt_run);
      tr::flush();
    }
    if (log.is_open()) {
      log.close();
      if (log.fail())
        throw std::invalid_argument("--log-json " + log_path + ": cannot write (" + std::strerror(errno) + ")");
    }
    if (!a.dump_params.empty()) dump_parameters(engine, world.rank, "--dump-params", a.dump_params);
  } catch (const std::invalid_argument& e) {
    fail(2, who, e.what());
  } catch (const PlantedFailure& e) {
    fail(3, who, e.what());
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    std::string diagnosis = rv->diagnose_lost_peer();
    if (rv->hosts_store()) {
      tr::stop();
      std::this_thread::sleep_for(std::chrono::seconds(5));  // the store lives in this process: let peers read it
    }
    fail(3, who, "a collective failed: " + what + "; " + diagnosis);
  }
  tr::stop();
  std::fflush(stdout);
  _exit(0);  // skip static destructors of libtorch and gloo threads; everything is written
}
