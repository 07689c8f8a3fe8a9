// The checkpoint's byte-level reader (training/checkpoint_file.h): a shard round-trips, and damage anywhere
// in it is refused by name without allocating by a length read from the file.
#include <gtest/gtest.h>

#include <sstream>

#include "training/checkpoint_file.h"

namespace shardscope::train {
namespace {

std::string shard(const std::vector<std::vector<float>>& tensors, uint64_t units) {
  std::ostringstream out;
  ShardWriter w(out, units);
  for (const auto& t : tensors) w.tensor(t.data(), t.size());
  w.finish();
  return out.str();
}

ShardLayout check(const std::string& bytes) {
  std::istringstream in(bytes);
  return check_shard(in, bytes.size(), "rank0.bin");
}

std::string refusal(const std::string& bytes) {
  try {
    check(bytes);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(CheckpointFile, ShardRoundTripsWithItsLengths) {
  const std::string bytes = shard({{1, 2, 3}, {4}, {}}, 1);
  const ShardLayout l = check(bytes);
  EXPECT_EQ(l.version, kCheckpointVersion);
  EXPECT_EQ(l.units, 1u);
  EXPECT_EQ(l.lengths, (std::vector<uint64_t>{3, 1, 0}));
}

TEST(CheckpointFile, EveryFlippedBitIsRefused) {
  const std::string bytes = shard({{1, 2, 3}, {4, 5}, {6}}, 1);
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = bytes;
      damaged[i] = char(damaged[i] ^ (1 << bit));
      const std::string why = refusal(damaged);
      EXPECT_EQ(why.rfind("rank0.bin: ", 0), 0u) << "byte " << i << " bit " << bit << ": " << why;
    }
  }
  EXPECT_NE(refusal(bytes.substr(0, bytes.size() - 1)).find("damaged"), std::string::npos);
  EXPECT_NE(refusal(bytes + "x").find("damaged"), std::string::npos);
}

TEST(CheckpointFile, HugeClaimedCountsAreRefusedBeforeAnyAllocation) {
  std::string bytes = shard({{1}, {2}, {3}}, 1);
  const uint64_t units = uint64_t(1) << 62;
  bytes.replace(8, 8, reinterpret_cast<const char*>(&units), 8);
  EXPECT_NE(refusal(bytes).find("claims 4611686018427387904 units"), std::string::npos) << refusal(bytes);
  bytes = shard({{1}, {2}, {3}}, 1);
  const uint64_t len = ~uint64_t(0) / 4;
  bytes.replace(16, 8, reinterpret_cast<const char*>(&len), 8);
  EXPECT_NE(refusal(bytes).find("past the end of the file"), std::string::npos) << refusal(bytes);
}

// Checkpoints written before the checksum (version 1: no trailer) still load.
TEST(CheckpointFile, VersionOneShardsHaveNoChecksumAndStillRead) {
  std::string bytes = shard({{1, 2}, {3}, {4}}, 1);
  bytes.resize(bytes.size() - 4);
  const uint64_t magic = shard_magic(1);
  bytes.replace(0, 8, reinterpret_cast<const char*>(&magic), 8);
  EXPECT_EQ(check(bytes).version, 1);
  EXPECT_EQ(meta_version(parse_checkpoint_meta(R"({"step": 3, "config": {}})", "meta.json", 3)), 1);
}

// Found by fuzz_checkpoint_reader: nlohmann reports a number past a double's range as out_of_range, not as
// a parse error, and it escaped the reader.
TEST(CheckpointFile, NumberPastADoubleIsInvalidJson) {
  try {
    parse_checkpoint_meta(R"({"step":6666666666666666e888888)", "m", 0);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("m: not valid JSON: number overflow parsing '6666666666666666e888888'", 0),
              0u)
        << e.what();
  }
}

TEST(CheckpointFile, MetaDepthIsLimited) {
  const std::string ok = R"({"version": 2, "step": 0, "config": {"model": {"layers": 4}}, "run": {}})";
  EXPECT_EQ(parse_checkpoint_meta(ok, "m", 0)["config"]["model"]["layers"], 4);
  std::string deep = R"({"step": 0, "config": )";
  for (int i = 0; i <= kMaxMetaDepth; ++i) deep += "[";
  try {
    parse_checkpoint_meta(deep, "m", 0);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "m: nested more than 32 deep, not a checkpoint's metadata");
  }
}

}  // namespace
}  // namespace shardscope::train
