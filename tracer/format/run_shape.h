// The run's shape, typed: what run_config says about how the run was sharded, sized and scheduled. The
// trainer fills one and writes it (to_json, beside the keys only it knows); the importer parses it once
// (run_shape_from_json) onto model::Rank::shape, where the analyses and the viewer read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracer/format/run_config.h"

namespace shardscope::trace {

// torch/distributed/fsdp/_limiter_utils.py: FSDP1's limit_all_gathers=True allows 2 all-gathers in flight.
inline constexpr int kFsdp1AllGatherLimit = 2;

// One FSDP unit (run_config.units[i]; Kineto's module names, numbered in order).
struct UnitShape {
  int64_t id = -1;   // -1: not given (or not a whole number)
  std::string name;  // "" when not given
  // Parameter counts as given: the memory model judges them (a hostile 1e300 is an n/a with its value).
  std::optional<double> params, padded_params;
  bool operator==(const UnitShape&) const = default;
};

// run_config.model: what the activation formula needs. Numbers as given; the formula judges them.
// ffn_dim (the trainer's SwiGLU width) picks the formula for the trainer's block.
struct ModelShape {
  std::optional<double> layers, dim, heads, seq_len, ffn_dim;
  std::optional<std::string> attention;  // keys::kCfgModelAttention
  bool operator==(const ModelShape&) const = default;
};

// A field of an unexpected type reads as absent (tracer/format/json_get.h), as every reader of run_config did.
struct RunShape {
  bool given = false;             // the trace has a run_config object
  std::string sharding;           // as written ("" when absent): strategy() reads it, n/a reasons quote it
  std::string backward_prefetch;  // as written ("" when absent)
  bool forward_prefetch = false;
  int limit_all_gathers = 0;  // all-gathers in flight at most; 0: off or not said. `true` reads as FSDP1's 2
  std::optional<std::string> param_dtype, reduce_dtype;
  int world_size = 0, ranks_per_node = 0;  // 0: not said (or not within 1 to 1e7)
  bool activation_checkpointing = false, cpu_offload = false;
  std::optional<double> batch_size;  // sequences per rank per step
  ModelShape model;
  std::vector<UnitShape> units;

  std::optional<Sharding> strategy() const { return sharding_from_name(sharding); }
  std::optional<BackwardPrefetch> prefetch() const { return prefetch_from_name(backward_prefetch); }
  // The name of unit `id`, "" when no unit has that id or names it.
  std::string unit_name(int64_t id) const;
  bool operator==(const RunShape&) const = default;
};

// `cfg` is the header's run_config; anything but an object gives a shape with `given` false.
RunShape run_shape_from_json(const nlohmann::json& cfg);
// The keys above, as the trainer writes them (counts as integers); the caller adds the keys only it knows.
nlohmann::json to_json(const RunShape& shape);

}  // namespace shardscope::trace
