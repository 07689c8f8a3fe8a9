// The checkpoint's byte-level reader (training/checkpoint_file.h): a shard round-trips, and damage anywhere
// in it is refused by name without allocating by a length read from the file.
#include <gtest/gtest.h>

#include <sstream>

#include "training/checkpoint_file.h"

namespace shardscope::train {
namespace {

constexpr ShardIdentity kOwner{.step = 7, .rank = 1, .world = 4, .config_digest = 0x0123456789abcdefULL};

std::string shard(const std::vector<std::vector<float>>& tensors, uint64_t units, const ShardIdentity& id = kOwner) {
  std::ostringstream out;
  ShardWriter w(out, id, units);
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
  EXPECT_EQ(l.version, 3);
  EXPECT_EQ(kCheckpointVersion, 3);
  EXPECT_EQ(l.identity.step, 7);
  EXPECT_EQ(l.identity.rank, 1);
  EXPECT_EQ(l.identity.world, 4);
  EXPECT_EQ(l.identity.config_digest, 0x0123456789abcdefULL);
  EXPECT_EQ(l.units, 1u);
  EXPECT_EQ(l.data_offset, 40u);  // magic 8, step 8, rank 4, world 4, digest 8, units 8
  EXPECT_EQ(bytes.size(), 40u + (8 + 12) + (8 + 4) + 8 + 4);
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
  bytes.replace(32, 8, reinterpret_cast<const char*>(&units), 8);
  EXPECT_NE(refusal(bytes).find("claims 4611686018427387904 units"), std::string::npos) << refusal(bytes);
  bytes = shard({{1}, {2}, {3}}, 1);
  const uint64_t len = ~uint64_t(0) / 4;
  bytes.replace(40, 8, reinterpret_cast<const char*>(&len), 8);
  EXPECT_NE(refusal(bytes).find("past the end of the file"), std::string::npos) << refusal(bytes);
}

// Checkpoints written before the checksum (version 1: no identity, no trailer) still load.
TEST(CheckpointFile, VersionOneShardsHaveNoChecksumAndStillRead) {
  std::string bytes;
  auto put = [&](const void* p, size_t n) { bytes.append(static_cast<const char*>(p), n); };
  const uint64_t magic = shard_magic(1), units = 1, one = 1;
  const float x = 2.5f;
  put(&magic, 8), put(&units, 8);
  for (int t = 0; t < 3; ++t) put(&one, 8), put(&x, 4);
  const ShardLayout l = check(bytes);
  EXPECT_EQ(l.version, 1);
  EXPECT_EQ(l.data_offset, 16u);
  EXPECT_EQ(l.lengths, (std::vector<uint64_t>{1, 1, 1}));
  check_shard_identity(l, kOwner, "rank0.bin");  // nothing recorded, nothing to check
  EXPECT_EQ(meta_version(parse_checkpoint_meta(R"({"step": 3, "config": {}})", "meta.json", 3)), 1);
}

std::string identity_refusal(const ShardIdentity& expected) {
  try {
    check_shard_identity(check(shard({{1}, {2}, {3}}, 1)), expected, "step_7/rank1.bin");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

// A shard copied from another step, rank, world or run (issue #40): the first difference, by name.
TEST(CheckpointFile, ShardIdentityIsCheckedFieldByField) {
  EXPECT_EQ(identity_refusal(kOwner), "(accepted)");
  ShardIdentity id = kOwner;
  id.step = 8;
  EXPECT_EQ(identity_refusal(id),
            "step_7/rank1.bin: written at step 7, but it lies in step_8 (a shard copied from another checkpoint?)");
  id = kOwner, id.rank = 0;
  EXPECT_EQ(identity_refusal(id),
            "step_7/rank1.bin: written by rank 1, but it is rank 0's file (a shard copied from another checkpoint?)");
  id = kOwner, id.world = 2;
  EXPECT_EQ(identity_refusal(id),
            "step_7/rank1.bin: written by a run of 4 ranks, but this run has 2 (a shard copied "
            "from another checkpoint?)");
  id = kOwner, id.config_digest = 0xfedcba9876543210ULL;
  EXPECT_EQ(identity_refusal(id),
            "step_7/rank1.bin: written by a run with other layout settings (config digest "
            "0123456789abcdef, this run's fedcba9876543210): it belongs to another checkpoint");
  // The step is named first when several differ.
  id.step = 0, id.world = 1;
  EXPECT_EQ(identity_refusal(id).find("step_7/rank1.bin: written at step 7, but it lies in step_0"), 0u);
}

// The digest is FNV-1a 64 of the compact text: that of "{}", worked out apart (Python, from the offset basis
// 0xcbf29ce484222325 and prime 0x100000001b3); key order does not matter (nlohmann sorts them).
TEST(CheckpointFile, ConfigDigestIsFnv1aOfTheSortedText) {
  EXPECT_EQ(config_digest(nlohmann::json::object()), 0x08f44b07b5901a25ULL);
  EXPECT_EQ(config_digest(nlohmann::json::parse(R"({"a": 1, "b": "x"})")),
            config_digest(nlohmann::json::parse(R"({"b": "x", "a": 1})")));
  EXPECT_NE(config_digest(nlohmann::json::parse(R"({"a": 1})")), config_digest(nlohmann::json::parse(R"({"a": 2})")));
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
