// shardscope-train's command line: the flags as given (Args), then checked and settled into what the run
// needs before anything starts (Plan). main() is flags → plan → run (run.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sizing/presets.h"
#include "training/comm/rendezvous.h"
#include "training/fsdp/options.h"

namespace shardscope::train {

struct Args {
  std::string preset = "tiny";
  sizing::ModelConfig model;
  std::string data = "synthetic", device = "cpu", sharding = "full_shard", prefetch = "pre";
  std::string param_dtype = "fp32", reduce_dtype = "fp32";
  std::string attention = "auto";  // sdpa | eager | auto (sdpa where libtorch has it)
  int stop_after = -1;
  int steps = 10, batch = 2, warmup = -1, limit_all_gathers = 2, ranks_per_node = 0, save_every = 0, threads = 1;
  double lr = 3e-3, max_grad_norm = 1.0;
  // Read as text: CLI11 stores -1, 2^64 and 1e20 in a uint64_t as UINT64_MAX without a word.
  std::string seed_text = "0";
  uint64_t seed = 0;
  bool forward_prefetch = false, checkpointing = false, cpu_offload = false, resume = false;
  std::string checkpoint_dir, trace_dir, log_json, dump_params, dump_initial_params;
  int rendezvous_timeout_s = 60;
  int collective_timeout_s = 0;
  int slow_rank = -1, slow_rank_ms = 0;
  int fail_at_step = -1, fail_rank = -1;  // testing: a planted failure
  // Which flags were given: an unset flag's sentinel is not a value a user may give, and a model flag
  // overrides its preset's value only when given.
  struct Given {
    bool stop_after = false, warmup = false, ranks_per_node = false, collective_timeout = false;
    bool fail_at_step = false, fail_rank = false, slow_rank = false;
    bool layers = false, dim = false, heads = false, kv_heads = false, ffn = false, vocab = false, seq = false;
  } given;
};

// What the flags settle before anything runs.
struct Plan {
  WorldEnv world;
  FsdpOptions options;
  int shard_size = 1;
};

// Parses the command line into `a`; a value when the process ends now (--help: 0, a parse error: 2).
std::optional<int> parse_flags(int argc, char** argv, Args& a);
// Checks the flags, reads the ranks' environment, completes the model from its preset and checks that the
// run fits this host. Throws std::invalid_argument with the line for the user.
Plan make_plan(Args& a);

}  // namespace shardscope::train
