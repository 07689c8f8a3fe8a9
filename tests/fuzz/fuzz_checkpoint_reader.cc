// libFuzzer target: the trainer's checkpoint reader as a damaged or hostile checkpoint reaches it, before any
// tensor exists (training/checkpoint_file.h): meta.json's text, and a rank's shard bytes. Each input is
// offered to both. Only std::invalid_argument, the reader's refusal, may come out; anything else (a crash,
// another exception, a runaway allocation or a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "training/checkpoint_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardscope::train;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json meta = parse_checkpoint_meta(bytes, "meta.json", -1);
    // What the trainer then does with a checked meta: its version, the configurations compared and printed.
    (void)meta_version(meta);
    (void)meta["config"].dump();
    (void)(meta["config"] == meta.value("run", nlohmann::json::object()));
  } catch (const std::invalid_argument&) {}
  try {
    std::istringstream in(bytes);
    const ShardLayout shard = check_shard(in, size, "rank0.bin");
    check_shard_identity(shard, {.step = 1, .rank = 0, .world = 1, .config_digest = 0}, "rank0.bin");
  } catch (const std::invalid_argument&) {}
  return 0;
}
