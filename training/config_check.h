// Ranks started with different flags would otherwise meet in a collective that never matches (a timeout) or
// in buffers of different sizes. At start every rank sends a digest of its configuration to every other over
// the run's own backend; when one differs, the ranks exchange the configurations themselves to name the
// first differing setting.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "training/checkpoint.h"
#include "training/checkpoint_file.h"  // config_digest: the same digest a checkpoint shard records
#include "training/comm/group.h"

namespace shardscope::train {

struct RankMismatch {
  int rank = 0;                 // the lowest rank whose configuration differs from rank 0's
  ConfigDifference difference;  // saved: rank 0's value, given: that rank's
};

// Collective over `world` (every rank of the run, on the device the group's backend needs: `cuda` and
// `device` as in FsdpOptions). Every rank returns the same answer: nullopt when all agree.
std::optional<RankMismatch> compare_across_ranks(Group& world, const nlohmann::json& config, bool cuda, int device);

// "rank 1's configuration differs from rank 0's: --steps 10 vs 12"
std::string describe(const RankMismatch& m);

}  // namespace shardscope::train
