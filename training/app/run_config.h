// The run's configuration as the trace's header and the checkpoints record it (tracer/format/run_config.h's
// vocabulary): the same on every rank, so that the ranks' headers agree.
#pragma once

#include <nlohmann/json.hpp>

#include "training/app/flags.h"

namespace shardscope::train {

nlohmann::json run_config(const Args& a, const FsdpOptions& o, const WorldEnv& w, int shard_size);

// What a checkpoint keeps of the run: its configuration less the schedule (a resume may change prefetch), and
// the optimizer's schedule and data.
struct CheckpointConfig {
  nlohmann::json config, run;
  int warmup = 0;
};
CheckpointConfig checkpoint_config(const Args& a, const nlohmann::json& config);

}  // namespace shardscope::train
