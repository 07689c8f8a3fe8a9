// Memory measured from the PyTorch profiler's [memory] events (metrics/memory_measured.h) on real captures:
// PyTorch 2.11 FSDP2, FSDP2 with reshard_after_forward=False and DDP on an H200 (tests/data/torch211_fsdp_memory,
// whose truth files hold torch.cuda.max_memory_allocated()/max_memory_reserved() per step) and Holistic Trace
// Analysis's public test trace (tests/data/hta_df_index_resolver). Every number below was worked out by
// tests/data/torch211_fsdp_memory/by_hand.py, which shares no code with shardscope and checks its per-step
// peaks against the truth files (all equal).
#include <gtest/gtest.h>

#include <filesystem>
#include <tuple>
#include <vector>

#include "analyzer/metrics/memory_measured.h"
#include "plugins/load/load.h"

using namespace shardscope;
namespace fs = std::filesystem;

namespace {

struct StepPeak {
  int64_t step, allocated, reserved;
};

struct Case {
  const char* file;  // under tests/data
  int32_t device;
  int64_t events, peak, peak_reserved, peak_step;
  std::vector<int64_t> again;
  int64_t before, before_left;
  // Alive at the peak, bytes and allocations: all-gather, reduce-scatter, optimizer, activations, other.
  std::vector<std::pair<int64_t, int64_t>> alive;
  std::vector<StepPeak> steps;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.file; }

const std::vector<StepPeak> kFsdp2Steps = {{0, 556191232, 729808896},
                                           {1, 675765760, 864026624},
                                           {2, 675765760, 864026624},
                                           {3, 675765760, 864026624},
                                           {4, 675765760, 864026624}};
const std::vector<StepPeak> kSgoSteps = {{2, 581416448, 736100352},
                                         {3, 581416448, 736100352},
                                         {4, 581416448, 736100352},
                                         {5, 581416448, 736100352},
                                         {6, 581416448, 736100352}};
const std::vector<StepPeak> kDdpSteps = {{0, 679978496, 708837376},
                                         {1, 965301760, 1002438656},
                                         {2, 965301760, 1002438656},
                                         {3, 881378816, 1002438656},
                                         {4, 881378816, 1002438656}};
const std::vector<StepPeak> kHtaSteps = {{2, 6629508096, 12782141440},
                                         {3, 6629508096, 12782141440},
                                         {4, 6629508096, 12782141440},
                                         {5, 6629508096, 12782141440},
                                         {6, 6629508096, 12782141440}};

const Case kCases[] = {
    {"torch211_fsdp_memory/fsdp2/rank0.json.gz",
     0,
     3263,
     675765760,
     864026624,
     1,
     {2, 3, 4},
     44075520,
     44075520,
     {{0, 0}, {0, 0}, {86020096, 72}, {344343040, 58}, {201327104, 5}},
     kFsdp2Steps},
    {"torch211_fsdp_memory/fsdp2/rank1.json.gz",
     0,
     3263,
     675765760,
     864026624,
     1,
     {2, 3, 4},
     44075520,
     44075520,
     {{0, 0}, {0, 0}, {86020096, 72}, {344343040, 58}, {201327104, 5}},
     kFsdp2Steps},
    // The optimizer's state was allocated before the window (steps 2-6): it is in the before-trace bytes.
    {"torch211_fsdp_memory/fsdp2_sgo/rank0.json.gz",
     0,
     2800,
     581416448,
     736100352,
     2,
     {3, 4, 5, 6},
     197204992,
     197204480,
     {{44058624, 36}, {0, 0}, {0, 0}, {205935104, 66}, {134218240, 3}},
     kSgoSteps},
    {"torch211_fsdp_memory/ddp/rank1.json.gz",
     0,
     2201,
     965301760,
     1002438656,
     1,
     {2},
     167862784,
     167862784,
     {{0, 0}, {0, 0}, {167845888, 72}, {344343040, 58}, {285250048, 8}},
     kDdpSteps},
    {"hta_df_index_resolver/df_index_resolver.json.gz",
     1,
     26770,
     6629508096,
     12782141440,
     2,
     {3, 4, 5, 6},
     4096614400,
     4096614400,
     {{0, 0}, {0, 0}, {0, 0}, {1329586688, 317}, {1203307008, 408}},
     kHtaSteps},
};

class MeasuredMemory : public ::testing::TestWithParam<Case> {};

TEST_P(MeasuredMemory, MatchesTheIndependentScript) {
  const Case& c = GetParam();
  const fs::path file = fs::path(SHARDSCOPE_DATA_DIR) / c.file;
  ASSERT_TRUE(fs::exists(file)) << file << " is missing: tests/data holds it";
  plugins::LoadResult loaded = plugins::load({file});
  ASSERT_EQ(loaded.trace.ranks.size(), 1u);
  const metrics::MeasuredMemory m = metrics::measure_memory(loaded.trace.ranks[0]);
  EXPECT_EQ(m.events, c.events);
  EXPECT_EQ(m.device, c.device);
  EXPECT_EQ(m.other_device_events, 0);
  EXPECT_EQ(m.chain_breaks, 0);
  EXPECT_TRUE(m.backward_seen);
  EXPECT_EQ(m.peak_allocated, c.peak);
  EXPECT_EQ(m.peak_reserved, c.peak_reserved);
  ASSERT_TRUE(m.peak_in_step);
  EXPECT_EQ(m.peak_step, c.peak_step);
  EXPECT_EQ(m.peak_again, c.again);
  EXPECT_EQ(m.before_trace, c.before);
  EXPECT_EQ(m.before_trace_left, c.before_left);
  ASSERT_EQ(m.alive.size(), size_t(metrics::kMadeCount));
  int64_t sum = m.before_trace_left;
  for (size_t i = 0; i < m.alive.size(); ++i) {
    EXPECT_EQ(m.alive[i].made, metrics::Made(i));
    EXPECT_EQ(m.alive[i].bytes, c.alive[i].first) << "group " << i;
    EXPECT_EQ(m.alive[i].allocations, c.alive[i].second) << "group " << i;
    sum += m.alive[i].bytes;
  }
  EXPECT_EQ(sum, m.peak_allocated) << "the groups and what was there before add up to the peak";
  ASSERT_EQ(m.steps.size(), c.steps.size());
  for (size_t i = 0; i < c.steps.size(); ++i) {
    EXPECT_EQ(m.steps[i].step, c.steps[i].step);
    EXPECT_EQ(m.steps[i].peak_allocated, c.steps[i].allocated) << "step " << c.steps[i].step;
    EXPECT_EQ(m.steps[i].peak_reserved, c.steps[i].reserved) << "step " << c.steps[i].step;
  }
}

INSTANTIATE_TEST_SUITE_P(RealCaptures, MeasuredMemory, ::testing::ValuesIn(kCases));

// A rank built by hand: a block freed and its address reused, a block allocated before the trace and freed in
// it, an event lost (the totals stop following), another device's events.
TEST(MeasuredMemoryEdges, PairsByAddressAndSaysWhatItCannotExplain) {
  model::Rank r;
  r.tracks.push_back({1, 1, "main", model::TrackKind::HostThread, {}});
  r.steps.push_back({7, 0, 0, 0, 100, false});  // host range [0, 100)
  auto ev = [&](int64_t ts, int64_t bytes, int64_t total, uint64_t addr, int32_t device = 0) {
    r.allocator.push_back({ts, bytes, total, 2 * total, addr, 0, device});
  };
  ev(10, 100, 1100, 0xA);       // 1000 allocated before the trace
  ev(20, -100, 1000, 0xA);      // freed
  ev(30, 50, 1050, 0xA);        // the address again: a new block
  ev(40, -300, 750, 0xB);       // a block from before the trace: 700 of the 1000 left
  ev(150, 40, 800, 0xC);        // after the step, and 10 bytes too many: one event lost; the peak stays 1100
  ev(160, 5000, 5000, 0xD, 3);  // another device
  const metrics::MeasuredMemory m = metrics::measure_memory(r);
  EXPECT_EQ(m.device, 0);
  EXPECT_EQ(m.events, 5);
  EXPECT_EQ(m.other_device_events, 1);
  EXPECT_EQ(m.peak_allocated, 1100);
  EXPECT_EQ(m.peak_reserved, 2200);
  EXPECT_TRUE(m.peak_in_step);
  EXPECT_EQ(m.peak_step, 7);
  EXPECT_EQ(m.before_trace, 1000);
  EXPECT_EQ(m.before_trace_left, 1000);  // the older block is freed after the peak
  EXPECT_EQ(m.chain_breaks, 1);
  EXPECT_FALSE(m.backward_seen);
  EXPECT_EQ(m.alive[size_t(metrics::Made::Other)].bytes, 100);  // the first block, alive at the peak
  ASSERT_EQ(m.steps.size(), 1u);
  EXPECT_EQ(m.steps[0].peak_allocated, 1100);
  EXPECT_TRUE(m.peak_again.empty());
}

TEST(MeasuredMemoryEdges, NoAllocatorEventsMeasureNothing) {
  model::Rank r;
  const metrics::MeasuredMemory m = metrics::measure_memory(r);
  EXPECT_EQ(m.events, 0);
  EXPECT_EQ(m.alive.size(), size_t(metrics::kMadeCount));
}

// Each group names the ZeRO model's category it stands beside, where the prediction sits.
TEST(MeasuredMemoryGroups, StandBesideTheModelsCategories) {
  EXPECT_EQ(metrics::zero_counterpart(metrics::Made::AllGather), "unsharded_params");
  EXPECT_EQ(metrics::zero_counterpart(metrics::Made::ReduceScatter), "gradients");
  EXPECT_EQ(metrics::zero_counterpart(metrics::Made::Optimizer), "optimizer_state");
  EXPECT_EQ(metrics::zero_counterpart(metrics::Made::Activations), "activations");
  EXPECT_EQ(metrics::zero_counterpart(metrics::Made::Other), "");
}

}  // namespace
