// The device's used memory beside the allocator's on real H200 runs (tests/data/h200_device_memory, made by
// tests/cupti/gpu_device_memory.sh): shardscope-train's three-way split of what no category counts, and an
// unmodified PyTorch program under the injection library held to what PyTorch and the driver said at its
// fullest moment (inject_truth.json, printed by tests/cupti/inject_memory.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/metrics/memory_model.h"
#include "plugins/load/load.h"

using namespace shardscope;
namespace fs = std::filesystem;

namespace {

const fs::path kRun = fs::path(SHARDSCOPE_DATA_DIR) / "h200_device_memory";

metrics::RankMemory memory_in(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  plugins::LoadResult loaded = plugins::load(files);
  EXPECT_EQ(loaded.trace.ranks.size(), 1u);
  return metrics::compare_memory(loaded.trace.ranks.at(0));
}

double at_fullest(const metrics::RankMemory& m, const std::string& category) {
  for (const metrics::MemoryRow& r : m.rows)
    if (r.category == category && r.at_fullest) return *r.at_fullest;
  ADD_FAILURE() << "no " << category << " row at the fullest moment";
  return -1;
}

}  // namespace

TEST(DeviceMemory, AnInjectedPyTorchProgramsReserveAndDeviceAreWhatPyTorchSaid) {
  std::ifstream f(kRun / "inject_truth.json");
  const nlohmann::json truth = nlohmann::json::parse(f);
  const metrics::RankMemory m = memory_in(kRun / "inject");
  const double used = truth.at("device_used_bytes").get<double>(), reserved = truth.at("reserved_bytes").get<double>();
  // The bound is 1 %; sampled where the memory moves, they are equal to the byte.
  EXPECT_NEAR(at_fullest(m, "allocator_total"), used, 0.01 * used);
  EXPECT_NEAR(at_fullest(m, "allocator_reserved"), reserved, 0.01 * reserved);
  EXPECT_DOUBLE_EQ(at_fullest(m, "allocator_total"), used);
  EXPECT_DOUBLE_EQ(at_fullest(m, "allocator_reserved"), reserved);
  // Outside PyTorch's allocator: the context and kernels, and cuBLAS's own workspaces (cudaMalloc'd by libcublas).
  EXPECT_DOUBLE_EQ(at_fullest(m, "outside_allocator"), used - reserved);
  EXPECT_GT(used - reserved, 100e6);
}

TEST(DeviceMemory, TheTrainersRowsAddUpToTheDevicesUsedMemoryOnAnH200) {
  const metrics::RankMemory m = memory_in(kRun / "trainer");
  const double total = at_fullest(m, "allocator_total");
  double parts = 0;
  for (const metrics::MemoryRow& r : m.rows)
    if (r.category != "allocator_total" && r.at_fullest) parts += *r.at_fullest;
  EXPECT_NEAR(parts, total, 0.01 * total);
  // At the end of step 0's forward (the categories' fullest sample), read off the trace by hand.
  EXPECT_DOUBLE_EQ(total, 4924964864);
  EXPECT_DOUBLE_EQ(at_fullest(m, "cached_free"), 376300544);         // reserved 2864.7 MB - allocated 2488.4 MB
  EXPECT_DOUBLE_EQ(at_fullest(m, "other_allocated"), 295133184);     // allocated - the categories' 2193.3 MB
  EXPECT_DOUBLE_EQ(at_fullest(m, "outside_allocator"), 2060255232);  // used 4925.0 MB - reserved
}
