// Sharded checkpoints: each rank writes its own master shard and AdamW moments; rank 0 writes one metadata
// file last, after every rank has written, so a directory with metadata is complete.
#pragma once

#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "training/fsdp/engine.h"

namespace shardscope::train {

// Collective: every rank calls it. `config` identifies the run (checked on resume).
void save_checkpoint(const std::filesystem::path& dir, int step, Engine& engine, int rank,
                     const nlohmann::json& config, const std::function<void()>& barrier);

// Loads the newest complete checkpoint under dir into the engine; returns its step, or nullopt when there is
// none. Throws std::invalid_argument when it was written by a different configuration or is damaged.
std::optional<int> load_checkpoint(const std::filesystem::path& dir, Engine& engine, int rank,
                                   const nlohmann::json& config);

}  // namespace shardscope::train
