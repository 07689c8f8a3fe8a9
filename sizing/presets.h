// The model's shape, its presets, and how its parameters fall into FSDP units: what the trainer builds and
// what `shardscope memory --preset` sizes. No libtorch here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardscope::sizing {

struct ModelConfig {
  std::string preset = "custom";
  int64_t layers = 4;
  int64_t dim = 128;
  int64_t heads = 4;
  int64_t kv_heads = 4;  // < heads: grouped-query attention (Llama-3)
  int64_t ffn_dim = 344;
  int64_t vocab = 256;
  int64_t seq_len = 64;

  int64_t head_dim() const { return dim / heads; }
  int64_t kv_dim() const { return kv_heads * head_dim(); }
};

// "tiny" (~1 M parameters), "small" (~125 M), "1b", "8b" (the Llama-3-8B shape). Throws on an unknown name.
ModelConfig preset(const std::string& name);
// Throws std::invalid_argument naming the first impossible field.
void validate(const ModelConfig& c);

// One parameter inside a unit's flat parameter.
struct ParamSpec {
  std::string name;
  std::vector<int64_t> shape;
  int64_t offset;  // elements from the flat parameter's start
  bool is_norm;    // initialized to ones
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
};

// An FSDP unit: unit 0 is the root (embedding, final norm, head); units 1..L are the blocks.
struct UnitLayout {
  int id;
  std::string name;
  std::vector<ParamSpec> params;
  int64_t numel = 0;  // sum of params, before padding
};

std::vector<UnitLayout> unit_layouts(const ModelConfig& c);
int64_t parameter_count(const ModelConfig& c);

// The parameter counts of a validated shape in checked int64 arithmetic, computed without building the
// units: nullopt when one leaves the range (no machine holds such a model, and the plain counts above would
// overflow). What a caller checks before anything is allocated.
struct ShapeCounts {
  int64_t root = 0;   // unit 0: embedding, final norm, head
  int64_t block = 0;  // each of the `layers` blocks
  int64_t total = 0;  // root + layers × block
};
std::optional<ShapeCounts> checked_counts(const ModelConfig& c);

}  // namespace shardscope::sizing
