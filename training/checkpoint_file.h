// A checkpoint's files as bytes, without libtorch: meta.json parsed with a depth limit and checked against its
// schema, and a rank's shard checked (structure and CRC-32) before any of it is loaded. What a damaged or
// hostile checkpoint reaches first; tests/fuzz/fuzz_checkpoint_reader.cc fuzzes it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardscope::train {

// 2: meta.json says "version": 2 and every shard ends with a CRC-32. 1 (no version): no checksum.
inline constexpr int kCheckpointVersion = 2;
// meta.json nests four deep; a limit keeps a hostile one from exhausting the stack.
inline constexpr int kMaxMetaDepth = 32;

// meta.json's text, parsed and checked: an object with "version" (1 or 2; absent: 1), "step" (an integer,
// `expected_step` unless that is negative), "config" (an object, "model" in it an object when present, its
// counts and the unit table's "id", "params" and "padded_params" whole numbers in range when present) and
// "run" (an object, when present). Throws std::invalid_argument: one line naming `file` and the key.
nlohmann::json parse_checkpoint_meta(std::string_view text, const std::string& file, int64_t expected_step);
int meta_version(const nlohmann::json& meta);  // of a checked meta

uint64_t shard_magic(int version);  // "ssckpt01", "ssckpt02"

// A shard: magic, unit count, then for each unit's master, exp_avg and exp_avg_sq a length and that many fp32
// values; from version 2 the CRC-32 of every byte before it, 4 bytes at the end.
struct ShardLayout {
  int version = 0;
  uint64_t units = 0;
  std::vector<uint64_t> lengths;  // elements of each tensor, in file order (3 a unit)
};

// Reads the `size` bytes of a shard from `in` and checks its structure against the size and its checksum,
// allocating nothing by a length read from it. Throws std::invalid_argument naming `file`.
ShardLayout check_shard(std::istream& in, uint64_t size, const std::string& file);

// Writes a shard, the checksum accumulated as it goes.
class ShardWriter {
 public:
  ShardWriter(std::ostream& out, uint64_t units);
  void tensor(const void* data, uint64_t elements);
  void finish();  // the checksum

 private:
  void put(const void* p, uint64_t bytes);
  std::ostream& out_;
  uint32_t crc_;
};

}  // namespace shardscope::train
