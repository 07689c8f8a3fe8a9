// Sharded checkpoints: each rank writes its own master shard and AdamW moments; rank 0 writes one metadata
// file last, after every rank has written, so a directory with metadata is complete.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "training/fsdp/engine.h"

namespace shardscope::train {

// Collective: every rank calls it. `config` identifies the run's layout (checked on resume); `run` holds the
// settings a resume may change (steps, learning rate, seed...), kept to name what changed. Each shard records
// its step, rank, `world` and the digest of config's layout settings (training/checkpoint_file.h).
void save_checkpoint(const std::filesystem::path& dir, int step, Engine& engine, int rank, int world,
                     const nlohmann::json& config, const std::function<void()>& barrier,
                     const nlohmann::json& run = nlohmann::json::object());

struct CheckpointInfo {
  int step = -1;
  std::filesystem::path dir;  // dir/step_N
  nlohmann::json meta;        // {version, step, config, run}, schema-checked (training/checkpoint_file.h)
};

// The newest complete checkpoint under dir. Throws std::invalid_argument naming dir when it does not exist,
// is not a folder, or holds no complete checkpoint, and naming the file and key when its meta.json is damaged.
CheckpointInfo newest_checkpoint(const std::filesystem::path& dir);

struct ConfigDifference {
  std::string flag;          // "--sharding", "WORLD_SIZE", ...
  std::string saved, given;  // the values, as the user would write them
  bool layout = true;        // true: the saved state cannot be loaded under the new value
};

// Each setting that differs between a checkpoint's {config, run} and this run's, by flag name.
std::vector<ConfigDifference> compare_configs(const nlohmann::json& saved_config, const nlohmann::json& saved_run,
                                              const nlohmann::json& config, const nlohmann::json& run);

// The difference between two configurations a user would fix first (the earliest flag in the key table), or
// nullopt when they agree. `saved` and `given` hold a's and b's values.
std::optional<ConfigDifference> first_difference(const nlohmann::json& a, const nlohmann::json& b);

// "--sharding: checkpoint full_shard, flags shard_grad_op; ..." for the differences with the given `layout`.
std::string describe_differences(const std::vector<ConfigDifference>& diffs, bool layout);

// Loads the newest complete checkpoint under dir into the engine; returns its step, or nullopt when there is
// none. Throws std::invalid_argument when it was written by a different configuration or is damaged (a shard
// whose checksum does not match, or that records another step, rank, world or configuration, is refused, by
// name, before any of it is loaded).
std::optional<int> load_checkpoint(const std::filesystem::path& dir, Engine& engine, int rank, int world,
                                   const nlohmann::json& config);

}  // namespace shardscope::train
