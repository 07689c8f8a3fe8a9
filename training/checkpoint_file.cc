#include "training/checkpoint_file.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <istream>
#include <ostream>
#include <stdexcept>

namespace shardscope::train {
namespace {

using json = nlohmann::json;

struct TooDeep {};

uint32_t crc_update(uint32_t crc, const void* p, uint64_t bytes) {
  const auto* b = static_cast<const Bytef*>(p);
  while (bytes > 0) {  // zlib takes a uInt length
    const uInt n = uInt(std::min<uint64_t>(bytes, 1u << 30));
    crc = uint32_t(crc32(crc, b, n));
    b += n, bytes -= n;
  }
  return crc;
}

// nlohmann's message without its "[json.exception.parse_error.101] " tag, cut to a line's length.
std::string parse_message(const json::exception& e) {
  std::string s = e.what();
  if (auto tag = s.find("] "); tag != std::string::npos) s.erase(0, tag + 2);
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

}  // namespace

json parse_checkpoint_meta(std::string_view text, const std::string& file, int64_t expected_step) {
  auto bad = [&](const std::string& what) { return std::invalid_argument(file + ": " + what); };
  json meta;
  try {
    // The callback sees each value's depth as it is opened: a deep one is refused before it is built.
    meta = json::parse(text.begin(), text.end(), [](int depth, json::parse_event_t, json&) {
      if (depth > kMaxMetaDepth) throw TooDeep{};
      return true;
    });
  } catch (const TooDeep&) {
    throw bad("nested more than " + std::to_string(kMaxMetaDepth) + " deep, not a checkpoint's metadata");
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number past a double's range
    throw bad("not valid JSON: " + parse_message(e));
  }
  if (!meta.is_object()) throw bad("expected a JSON object, got " + std::string(meta.type_name()));
  auto key = [&](const std::string& k, const std::string& what) { return bad("key '" + k + "': " + what); };
  auto got = [](const json& v) {
    std::string s = v.dump();
    return " (got " + (s.size() > 40 ? s.substr(0, 37) + "..." : s) + ")";
  };
  // A small non-negative integer: what the trainer writes for both keys.
  auto count = [](const json& v) {
    return v.is_number_unsigned() ? v.get<uint64_t>() <= INT_MAX
                                  : v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= INT_MAX;
  };
  if (meta.contains("version")) {
    const json& v = meta["version"];
    if (!count(v) || v.get<int64_t>() < 1 || v.get<int64_t>() > kCheckpointVersion)
      throw key("version", "expected 1 to " + std::to_string(kCheckpointVersion) + got(v));
  }
  if (!meta.contains("step")) throw key("step", "missing");
  if (!count(meta["step"])) throw key("step", "expected a non-negative integer" + got(meta["step"]));
  if (expected_step >= 0 && meta["step"].get<int64_t>() != expected_step)
    throw key("step", std::to_string(meta["step"].get<int64_t>()) + ", but the folder is step_" +
                          std::to_string(expected_step));
  if (!meta.contains("config")) throw key("config", "missing");
  if (!meta["config"].is_object()) throw key("config", "expected an object" + got(meta["config"]));
  if (meta["config"].contains("model") && !meta["config"]["model"].is_object())
    throw key("config.model", "expected an object" + got(meta["config"]["model"]));
  // The numbers the trainer writes: whole, in range. Otherwise 1e300 or -5 would be compared as a setting and
  // reported as a different layout, or hidden in "5 units".
  auto whole = [&](const json& obj, const std::string& path, const char* name, int64_t min, int64_t max) {
    if (!obj.contains(name)) return;
    const json& v = obj[name];
    const bool ok = v.is_number_unsigned()
                        ? v.get<uint64_t>() >= uint64_t(std::max<int64_t>(min, 0)) && v.get<uint64_t>() <= uint64_t(max)
                    : v.is_number_integer() ? v.get<int64_t>() >= min && v.get<int64_t>() <= max
                                            : false;
    if (!ok)
      throw key(path + name,
                "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) + got(v));
  };
  const json& config = meta["config"];
  for (const char* name : {"world_size", "shard_size", "ranks_per_node", "batch_size", "limit_all_gathers"})
    whole(config, "config.", name, 1, INT_MAX);
  if (config.contains("model")) {
    for (const char* name : {"layers", "dim", "heads", "kv_heads", "ffn_dim", "vocab", "seq_len", "params"})
      whole(config["model"], "config.model.", name, 1, INT64_MAX);
  }
  if (config.contains("units")) {
    const json& units = config["units"];
    if (!units.is_array()) throw key("config.units", "expected an array" + got(units));
    for (size_t i = 0; i < units.size(); ++i) {
      const std::string at = "config.units[" + std::to_string(i) + "]";
      if (!units[i].is_object()) throw key(at, "expected an object" + got(units[i]));
      whole(units[i], at + ".", "id", 0, INT_MAX);
      whole(units[i], at + ".", "params", 1, INT64_MAX);
      whole(units[i], at + ".", "padded_params", 1, INT64_MAX);
    }
  }
  if (meta.contains("run") && !meta["run"].is_object()) throw key("run", "expected an object" + got(meta["run"]));
  return meta;
}

uint64_t config_digest(const json& config) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : config.dump()) h = (h ^ uint8_t(c)) * 0x100000001b3ULL;
  return h;
}

int meta_version(const json& meta) { return meta.contains("version") ? meta["version"].get<int>() : 1; }

uint64_t shard_magic(int version) {
  return 0x7373636b70743030ULL + uint64_t(version);  // the text "ssckpt0N" read as a big-endian number
}

ShardLayout check_shard(std::istream& in, uint64_t size, const std::string& file) {
  auto bad = [&](const std::string& what) { return std::invalid_argument(file + ": " + what); };
  uint32_t crc = crc_update(0, nullptr, 0);
  uint64_t pos = 0;
  auto read = [&](void* p, uint64_t n) {
    in.read(static_cast<char*>(p), std::streamsize(n));
    if (!in) throw bad("damaged: truncated at byte " + std::to_string(pos) + " of " + std::to_string(size));
    crc = crc_update(crc, p, n);
    pos += n;
  };
  ShardLayout layout;
  uint64_t magic = 0;
  if (size < 16) throw bad("damaged: " + std::to_string(size) + " bytes, shorter than a shard's header");
  read(&magic, 8);
  for (int v = 1; v <= kCheckpointVersion; ++v)
    if (magic == shard_magic(v)) layout.version = v;
  if (layout.version == 0) throw bad("not a shardscope-train checkpoint shard (unknown magic number)");
  const uint64_t identity = layout.version >= 3 ? 24 : 0, trailer = layout.version >= 2 ? 4 : 0;
  if (size < 16 + identity + trailer)
    throw bad("damaged: " + std::to_string(size) + " bytes, shorter than a shard's header and checksum");
  const uint64_t end = size - trailer;
  if (identity) {
    ShardIdentity& id = layout.identity;
    read(&id.step, 8), read(&id.rank, 4), read(&id.world, 4), read(&id.config_digest, 8);
  }
  read(&layout.units, 8);
  layout.data_offset = pos;
  if (layout.units > (end - pos) / 24)  // each tensor has at least its 8-byte length
    throw bad("damaged: it claims " + std::to_string(layout.units) + " units, more than its " + std::to_string(size) +
              " bytes hold");
  layout.lengths.reserve(size_t(layout.units) * 3);
  char buf[1 << 16];
  for (uint64_t i = 0; i < layout.units * 3; ++i) {
    uint64_t len = 0;
    if (end - pos < 8) throw bad("damaged: truncated at tensor " + std::to_string(i));
    read(&len, 8);
    if (len > (end - pos) / 4)
      throw bad("damaged: tensor " + std::to_string(i) + " claims " + std::to_string(len) +
                " values, past the end of the file");
    for (uint64_t left = len * 4; left > 0;) {
      const uint64_t n = std::min<uint64_t>(left, sizeof buf);
      read(buf, n);
      left -= n;
    }
    layout.lengths.push_back(len);
  }
  if (pos != end) throw bad("damaged: " + std::to_string(end - pos) + " bytes after the last tensor");
  if (layout.version >= 2) {
    uint32_t stored = 0;
    in.read(reinterpret_cast<char*>(&stored), 4);
    if (!in) throw bad("damaged: truncated before its checksum");
    if (stored != crc) {
      char msg[96];
      std::snprintf(msg, sizeof msg, "damaged: checksum mismatch (stored %08x, contents %08x)", unsigned(stored),
                    unsigned(crc));
      throw bad(msg);
    }
  }
  return layout;
}

void check_shard_identity(const ShardLayout& shard, const ShardIdentity& expected, const std::string& file) {
  if (shard.version < 3) return;
  const ShardIdentity& got = shard.identity;
  auto bad = [&](const std::string& what) { return std::invalid_argument(file + ": " + what); };
  const std::string copied = " (a shard copied from another checkpoint?)";
  if (got.step != expected.step)
    throw bad("written at step " + std::to_string(got.step) + ", but it lies in step_" + std::to_string(expected.step) +
              copied);
  if (got.rank != expected.rank)
    throw bad("written by rank " + std::to_string(got.rank) + ", but it is rank " + std::to_string(expected.rank) +
              "'s file" + copied);
  if (got.world != expected.world)
    throw bad("written by a run of " + std::to_string(got.world) + " ranks, but this run has " +
              std::to_string(expected.world) + copied);
  if (got.config_digest != expected.config_digest) {
    char digests[64];
    std::snprintf(digests, sizeof digests, " (config digest %016llx, this run's %016llx)",
                  static_cast<unsigned long long>(got.config_digest),
                  static_cast<unsigned long long>(expected.config_digest));
    throw bad(std::string("written by a run with other layout settings") + digests +
              ": it belongs to another checkpoint");
  }
}

ShardWriter::ShardWriter(std::ostream& out, const ShardIdentity& identity, uint64_t units)
    : out_(out), crc_(crc_update(0, nullptr, 0)) {
  const uint64_t magic = shard_magic(kCheckpointVersion);
  put(&magic, 8);
  put(&identity.step, 8), put(&identity.rank, 4), put(&identity.world, 4), put(&identity.config_digest, 8);
  put(&units, 8);
}

void ShardWriter::tensor(const void* data, uint64_t elements) {
  put(&elements, 8);
  put(data, elements * 4);
}

void ShardWriter::finish() { out_.write(reinterpret_cast<const char*>(&crc_), 4); }

void ShardWriter::put(const void* p, uint64_t bytes) {
  out_.write(static_cast<const char*>(p), std::streamsize(bytes));
  crc_ = crc_update(crc_, p, bytes);
}

}  // namespace shardscope::train
