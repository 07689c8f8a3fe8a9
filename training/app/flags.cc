#include "training/app/flags.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#if SHARDSCOPE_TRAIN_NCCL
#include <cuda_runtime_api.h>
#include <torch/cuda.h>
#endif
#include "training/comm/group.h"
#include "training/model/transformer.h"
#include "training/preflight.h"

namespace shardscope::train {
namespace {

namespace fs = std::filesystem;

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

// An output folder (--checkpoint-dir, --trace-dir), before anything is trained: a folder, made now when
// missing, where files can be made. Otherwise the first write fails after the training it was to keep.
void check_output_dir(const char* flag, const std::string& dir) {
  const std::string named = std::string(flag) + " " + dir;
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::is_regular_file(st)) throw std::invalid_argument(named + " is a file, not a folder");
  if (fs::exists(st) && !fs::is_directory(st)) throw std::invalid_argument(named + " is not a folder");
  if (!fs::exists(st)) {
    fs::create_directories(dir, ec);
    if (ec) throw std::invalid_argument(named + ": cannot create the folder (" + ec.message() + ")");
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    throw std::invalid_argument(named + ": cannot write in the folder (" + std::strerror(errno) + ")");
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

void add_model_flags(CLI::App& app, Args& a, std::vector<std::pair<CLI::Option*, bool*>>& given) {
  app.add_option("--preset", a.preset, "tiny (~1M params), small (~125M), 1b, 8b")
      ->check(CLI::IsMember({"tiny", "small", "1b", "8b"}));
  Args::Given& g = a.given;
  given.emplace_back(app.add_option("--layers", a.model.layers, "Transformer blocks (overrides the preset)"),
                     &g.layers);
  given.emplace_back(app.add_option("--dim", a.model.dim, "Model width"), &g.dim);
  given.emplace_back(app.add_option("--heads", a.model.heads, "Attention heads"), &g.heads);
  given.emplace_back(app.add_option("--kv-heads", a.model.kv_heads, "Key/value heads (grouped-query attention)"),
                     &g.kv_heads);
  given.emplace_back(app.add_option("--ffn-dim", a.model.ffn_dim, "SwiGLU hidden width"), &g.ffn);
  given.emplace_back(app.add_option("--vocab", a.model.vocab, "Vocabulary size"), &g.vocab);
  given.emplace_back(app.add_option("--seq-len", a.model.seq_len, "Sequence length"), &g.seq);
}

void add_schedule_flags(CLI::App& app, Args& a, std::vector<std::pair<CLI::Option*, bool*>>& given) {
  app.add_option("--data", a.data, "'synthetic', or a text file read as byte tokens");
  app.add_option("--steps", a.steps, "Training steps");
  given.emplace_back(app.add_option("--stop-after", a.stop_after,
                                    "Stop after this many steps, as if interrupted (the schedule still spans --steps)"),
                     &a.given.stop_after);
  app.add_option("--batch-size", a.batch, "Sequences per rank per step");
  app.add_option("--lr", a.lr, "Peak learning rate");
  given.emplace_back(app.add_option("--warmup", a.warmup, "Warmup steps (default: a tenth of --steps)"),
                     &a.given.warmup);
  app.add_option("--max-grad-norm", a.max_grad_norm, "Global gradient-norm clip (0: off)");
  app.add_option("--seed", a.seed_text, "Initialization and data seed (a whole number from 0 to 2^64-1)");
}

void add_fsdp_flags(CLI::App& app, Args& a, std::vector<std::pair<CLI::Option*, bool*>>& given) {
  app.add_option("--device", a.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--sharding", a.sharding, "no_shard | zero1 | shard_grad_op | full_shard | hybrid_shard");
  app.add_option("--backward-prefetch", a.prefetch, "none | pre | post");
  app.add_flag("--forward-prefetch", a.forward_prefetch, "Issue the next unit's all-gather before this unit's forward");
  app.add_option("--limit-all-gathers", a.limit_all_gathers, "All-gathers in flight at most");
  given.emplace_back(app.add_option("--ranks-per-node", a.ranks_per_node, "hybrid_shard: ranks in one sharding group"),
                     &a.given.ranks_per_node);
  app.add_option("--param-dtype", a.param_dtype, "fp32 | bf16");
  app.add_option("--reduce-dtype", a.reduce_dtype, "fp32 | bf16");
  app.add_flag("--activation-checkpointing", a.checkpointing, "Recompute each block's forward in backward");
  app.add_option("--attention", a.attention,
                 "sdpa (fused, libtorch 2.x) | eager (the scores materialised, softmax in fp32) | auto: sdpa where "
                 "libtorch has it")
      ->check(CLI::IsMember({"auto", "sdpa", "eager"}));
  app.add_flag("--cpu-offload", a.cpu_offload, "Keep sharded state on the host (GPU runs)");
}

void add_output_flags(CLI::App& app, Args& a, std::vector<std::pair<CLI::Option*, bool*>>& given) {
  app.add_option("--checkpoint-dir", a.checkpoint_dir, "Where checkpoints go");
  app.add_option("--save-every", a.save_every, "Checkpoint every N steps (0: only at the end when --checkpoint-dir)");
  app.add_flag("--resume", a.resume, "Continue from the newest checkpoint in --checkpoint-dir");
  app.add_option("--trace-dir", a.trace_dir, "Write one trace file per rank here");
  app.add_option("--log-json", a.log_json, "One JSON line per step (rank 0; '{rank}' in the name: every rank)");
  app.add_option("--dump-params", a.dump_params, "After training, rank 0 writes all parameters (fp32, raw) here");
  app.add_option(
      "--dump-initial-params", a.dump_initial_params,
      "Before the first step, rank 0 writes all parameters (fp32, raw) here (a reference run starts from them)");
  given.emplace_back(
      app.add_option(
          "--slow-rank", a.slow_rank,
          "A planted straggler for checking diagnostics: this rank sleeps --slow-rank-ms before each unit's backward"),
      &a.given.slow_rank);
  app.add_option("--slow-rank-ms", a.slow_rank_ms, "Milliseconds --slow-rank sleeps before each unit's backward");
  given.emplace_back(
      app.add_option("--fail-at-step", a.fail_at_step, "Testing: throw in the middle of this step")->group(""),
      &a.given.fail_at_step);
  given.emplace_back(
      app.add_option("--fail-rank", a.fail_rank, "Testing: the rank --fail-at-step fails (default: every rank)")
          ->group(""),
      &a.given.fail_rank);
  app.add_option("--threads", a.threads, "Intra-op threads per rank");
  app.add_option("--rendezvous-timeout", a.rendezvous_timeout_s, "Seconds to wait for every rank");
  given.emplace_back(
      app.add_option("--collective-timeout", a.collective_timeout_s,
                     "Seconds a collective may take from its issue before the run stops (default 30 on CPU, 300 on a "
                     "GPU)"),
      &a.given.collective_timeout);
}

// The numbers' ranges, checked here rather than by CLI11's, whose messages print the bounds of a double (309
// digits). An unset flag's sentinel (-1) is not a value a user may give.
void check_numbers(Args& a) {
  const Args::Given& g = a.given;
  at_least("--steps", a.steps, 1);
  at_least("--batch-size", a.batch, 1);
  at_least("--stop-after", a.stop_after, 1, !g.stop_after);
  if (!(a.lr > 0)) throw std::invalid_argument("--lr must be greater than 0 (got " + number(a.lr) + ")");
  finite("--lr", a.lr);  // inf would train to nan
  // The optimizer computes in float: a larger rate is inf there (and fails in the first step).
  if (a.lr > double(FLT_MAX))
    throw std::invalid_argument("--lr must be at most " + number(FLT_MAX) + ", a float's range (got " + number(a.lr) +
                                ")");
  a.seed = parse_seed(a.seed_text);
  if (!(a.max_grad_norm >= 0))
    throw std::invalid_argument("--max-grad-norm must be 0 (off) or more (got " + number(a.max_grad_norm) + ")");
  finite("--max-grad-norm", a.max_grad_norm);
  at_least("--warmup", a.warmup, 0, !g.warmup);
  at_least("--limit-all-gathers", a.limit_all_gathers, 1);
  at_least("--save-every", a.save_every, 0);
  at_least("--ranks-per-node", a.ranks_per_node, 1, !g.ranks_per_node);
  at_least("--threads", a.threads, 1);
  // More intra-op threads than CPUs only contend; tens of thousands never finish starting.
  at_most("--threads", a.threads, std::max(1u, std::thread::hardware_concurrency()));
  at_least("--rendezvous-timeout", a.rendezvous_timeout_s, 1);
  at_most("--rendezvous-timeout", a.rendezvous_timeout_s, 86'400);
  at_least("--collective-timeout", a.collective_timeout_s, 1, !g.collective_timeout);
  at_most("--collective-timeout", a.collective_timeout_s, 86'400);
  at_least("--fail-at-step", a.fail_at_step, 0, !g.fail_at_step);
  at_least("--fail-rank", a.fail_rank, 0, !g.fail_rank);
  at_least("--slow-rank", a.slow_rank, 0, !g.slow_rank);
  at_least("--slow-rank-ms", a.slow_rank_ms, 0);
  if (a.slow_rank_ms > 60'000)
    throw std::invalid_argument("--slow-rank-ms must be at most 60000 (got " + std::to_string(a.slow_rank_ms) + ")");
}

// The preset's values for the model flags not given.
void complete_model(Args& a) {
  const Args::Given& g = a.given;
  sizing::ModelConfig base = sizing::preset(a.preset);
  auto keep = [](bool given, int64_t& field, int64_t preset_value) {
    if (!given) field = preset_value;
  };
  keep(g.layers, a.model.layers, base.layers), keep(g.dim, a.model.dim, base.dim);
  keep(g.heads, a.model.heads, base.heads), keep(g.ffn, a.model.ffn_dim, base.ffn_dim);
  keep(g.vocab, a.model.vocab, base.vocab), keep(g.seq, a.model.seq_len, base.seq_len);
  if (!g.kv_heads) a.model.kv_heads = g.heads ? a.model.heads : base.kv_heads;
  const bool custom = g.layers || g.dim || g.heads || g.kv_heads || g.ffn || g.vocab || g.seq;
  a.model.preset = custom ? "custom" : a.preset;
  sizing::validate(a.model);
}

void choose_device(const Args& a, const WorldEnv& world, FsdpOptions& o) {
  if (a.device != "cuda") return;
#if SHARDSCOPE_TRAIN_NCCL
  if (torch::cuda::device_count() == 0)
    throw std::invalid_argument("--device cuda: no CUDA device is visible (or this libtorch was built without CUDA)");
  o.cuda = true;
  o.device = world.local_rank % int(torch::cuda::device_count());
  cudaSetDevice(o.device);
#else
  (void)world, (void)o;
  throw std::invalid_argument("--device cuda: this build has no NCCL/CUDA backend (CPU and Gloo only)");
#endif
}

void check_offload(const Args& a, FsdpOptions& o) {
  if (!a.cpu_offload) return;
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

FsdpOptions fsdp_options(const Args& a, const WorldEnv& world) {
  FsdpOptions o;
  o.sharding = parse_sharding(a.sharding);
  o.backward_prefetch = parse_prefetch(a.prefetch);
  o.forward_prefetch = a.forward_prefetch;
  o.limit_all_gathers = a.limit_all_gathers;
  o.param_dtype = parse_dtype(a.param_dtype);
  o.reduce_dtype = parse_dtype(a.reduce_dtype);
  o.activation_checkpointing = a.checkpointing;
  if (a.attention == "sdpa" && !kHaveSdpa)
    throw std::invalid_argument("--attention sdpa: this libtorch (" TORCH_VERSION
                                ") has no scaled_dot_product_attention (2.0 and later do); use eager");
  o.sdpa = a.attention == "sdpa" || (a.attention == "auto" && kHaveSdpa);
  o.ranks_per_node = a.ranks_per_node;
  o.collective_timeout_s = a.collective_timeout_s;
  if (a.slow_rank >= 0 && a.slow_rank >= world.world_size)
    throw std::invalid_argument("--slow-rank " + std::to_string(a.slow_rank) + ": the run has ranks 0 to " +
                                std::to_string(world.world_size - 1));
  o.slow_rank = a.slow_rank;
  if (a.slow_rank == world.rank) o.backward_delay_ms = a.slow_rank_ms;
  choose_device(a, world, o);
  check_offload(a, o);
  if (o.sharding == Sharding::HybridShard && (a.ranks_per_node < 1 || world.world_size % a.ranks_per_node != 0))
    throw std::invalid_argument(
        "hybrid_shard needs --ranks-per-node dividing WORLD_SIZE=" + std::to_string(world.world_size) +
        (a.ranks_per_node ? " (got " + std::to_string(a.ranks_per_node) + ")" : " (none given)"));
  return o;
}

}  // namespace

std::optional<int> parse_flags(int argc, char** argv, Args& a) {
  CLI::App app{"shardscope-train: FSDP / ZeRO training of a decoder-only transformer, traced"};
  std::vector<std::pair<CLI::Option*, bool*>> given;
  add_model_flags(app, a, given);
  add_schedule_flags(app, a, given);
  add_fsdp_flags(app, a, given);
  add_output_flags(app, a, given);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  for (auto& [option, was_given] : given) *was_given = bool(*option);
  return std::nullopt;
}

Plan make_plan(Args& a) {
  check_numbers(a);
  Plan p;
  p.world = read_world_env();
  complete_model(a);
  p.options = fsdp_options(a, p.world);
  const FsdpOptions& o = p.options;
  if (a.resume && a.checkpoint_dir.empty()) throw std::invalid_argument("--resume needs --checkpoint-dir");
  if (!a.checkpoint_dir.empty() && !a.resume) check_output_dir("--checkpoint-dir", a.checkpoint_dir);
  if (!a.trace_dir.empty()) check_output_dir("--trace-dir", a.trace_dir);
  p.shard_size = o.sharding == Sharding::NoShard       ? 1
                 : o.sharding == Sharding::HybridShard ? a.ranks_per_node
                                                       : p.world.world_size;
  // Before the unit table, the data or any tensor: counts in checked arithmetic, then the host's memory.
  check_run_fits({.model = a.model,
                  .batch = a.batch,
                  .shard_size = p.shard_size,
                  .stage = zero_stage(o.sharding),
                  .param_dtype = a.param_dtype,
                  .offload = a.cpu_offload,
                  .prefetching = o.backward_prefetch != BackwardPrefetch::None,
                  .forward_prefetch = o.forward_prefetch,
                  .checkpointing = o.activation_checkpointing},
                 !o.cuda, available_host_bytes(), p.world.local_world_size);
  // Within what memory allows, tiny blocks could still be numerous enough to exhaust it in bookkeeping.
  at_most("--layers", a.model.layers, 100'000);
  return p;
}

}  // namespace shardscope::train
