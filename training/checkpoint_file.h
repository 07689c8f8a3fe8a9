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

// 3: each shard's header also says whose it is (ShardIdentity), so a shard copied from another step, rank or
// run is refused. 2: every shard ends with a CRC-32. 1 (no version in meta.json): no checksum.
inline constexpr int kCheckpointVersion = 3;
// meta.json nests four deep; a limit keeps a hostile one from exhausting the stack.
inline constexpr int kMaxMetaDepth = 32;

// meta.json's text, parsed and checked: an object with "version" (1 or 2; absent: 1), "step" (an integer,
// `expected_step` unless that is negative), "config" (an object, "model" in it an object when present, its
// counts and the unit table's "id", "params" and "padded_params" whole numbers in range when present) and
// "run" (an object, when present). Throws std::invalid_argument: one line naming `file` and the key.
nlohmann::json parse_checkpoint_meta(std::string_view text, const std::string& file, int64_t expected_step);
int meta_version(const nlohmann::json& meta);  // of a checked meta

uint64_t shard_magic(int version);  // "ssckpt01" to "ssckpt03"

// Whose a shard is (version 3): the step folder, rank and world it was written for, and the digest of the
// settings its state depends on (config_digest). Checked on resume against where the file lies and the run.
struct ShardIdentity {
  int64_t step = 0;
  int32_t rank = 0, world = 0;
  uint64_t config_digest = 0;
};

// 64-bit FNV-1a of the configuration's compact JSON text (keys sorted, so the same settings give the same
// digest on every rank and in every run).
uint64_t config_digest(const nlohmann::json& config);

// A shard: magic; from version 3 the identity (step int64, rank int32, world int32, digest uint64); the unit
// count; then for each unit's master, exp_avg and exp_avg_sq a length and that many fp32 values; from
// version 2 the CRC-32 of every byte before it, 4 bytes at the end.
struct ShardLayout {
  int version = 0;
  ShardIdentity identity;  // version 3 on
  uint64_t units = 0;
  uint64_t data_offset = 0;       // the first tensor's length
  std::vector<uint64_t> lengths;  // elements of each tensor, in file order (3 a unit)
};

// Reads the `size` bytes of a shard from `in` and checks its structure against the size and its checksum,
// allocating nothing by a length read from it. Throws std::invalid_argument naming `file`.
ShardLayout check_shard(std::istream& in, uint64_t size, const std::string& file);

// A checked version 3 shard against the identity the resume expects (earlier versions record none). Throws
// std::invalid_argument: one line naming `file` and the first thing that differs (step, rank, world, digest).
void check_shard_identity(const ShardLayout& shard, const ShardIdentity& expected, const std::string& file);

// Writes a shard, the checksum accumulated as it goes.
class ShardWriter {
 public:
  ShardWriter(std::ostream& out, const ShardIdentity& identity, uint64_t units);
  void tensor(const void* data, uint64_t elements);
  void finish();  // the checksum

 private:
  void put(const void* p, uint64_t bytes);
  std::ostream& out_;
  uint32_t crc_;
};

}  // namespace shardscope::train
