// Collective statistics, bus bandwidth, stragglers and the ZeRO memory model on hand-built cases.
#include <gtest/gtest.h>

#include "analyzer/metrics/collectives.h"
#include "analyzer/metrics/memory_model.h"
#include "model/classify.h"
#include "plugins/load/load.h"
#include "tests/analyzer/trainer_trace.h"
#include "tests/support/temp_dir.h"

using namespace shardscope;
using model::CollectiveKind;

namespace {

model::Event comm(CollectiveKind k, int64_t ts, int64_t dur, int64_t bytes, int group) {
  model::Event e;
  e.cls = model::IntervalClass::Communication;
  e.coll = k;
  e.ts_ns = ts;
  e.dur_ns = dur;
  e.bytes = bytes;
  e.group_size = group;
  return e;
}

TEST(Collectives, CountBytesTimeAndBandwidths) {
  model::Rank r;
  r.tracks.push_back({});
  // Two all-gathers of 1 GB over 4 ranks, 1 ms + 3 ms: algbw = 2e9 B / 4e6 ns = 500 GB/s;
  // busbw = 500 × 3/4 = 375. One all-reduce of 1e9 B in 2 ms over 8 ranks: algbw 500, busbw 500 × 2·7/8 = 875.
  r.tracks[0].events = {comm(CollectiveKind::AllGather, 0, 1'000'000, 1'000'000'000, 4),
                        comm(CollectiveKind::AllGather, 5'000'000, 3'000'000, 1'000'000'000, 4),
                        comm(CollectiveKind::AllReduce, 9'000'000, 2'000'000, 1'000'000'000, 8),
                        comm(CollectiveKind::SendRecv, 12'000'000, 1'000, model::kUnknown, 0)};
  auto stats = metrics::collective_stats(r);
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_EQ(stats[0].kind, CollectiveKind::AllGather);
  EXPECT_EQ(stats[0].count, 2);
  EXPECT_EQ(stats[0].bytes, 2'000'000'000);
  EXPECT_EQ(stats[0].time_ns, 4'000'000);
  EXPECT_DOUBLE_EQ(*stats[0].algbw_gbps(), 500.0);
  EXPECT_DOUBLE_EQ(*stats[0].busbw_gbps(), 375.0);
  EXPECT_EQ(stats[1].kind, CollectiveKind::AllReduce);
  EXPECT_DOUBLE_EQ(*stats[1].busbw_gbps(), 875.0);
  EXPECT_EQ(stats[2].kind, CollectiveKind::SendRecv);
  EXPECT_FALSE(stats[2].algbw_gbps().has_value());  // no size in the trace: n/a, not 0
}

// Durations and sizes from a hostile file near INT64_MAX: the per-kind totals hold there instead of wrapping
// negative (signed overflow, which UBSan reports).
TEST(Collectives, TotalsAtTheInt64ExtremesSaturate) {
  model::Rank r;
  r.tracks.push_back({});
  r.tracks[0].events = {comm(CollectiveKind::AllGather, INT64_MIN, INT64_MAX, INT64_MAX, 4),
                        comm(CollectiveKind::AllGather, 0, INT64_MAX, 1, 4),
                        comm(CollectiveKind::AllGather, 1, 1, model::kUnknown, 4)};
  auto stats = metrics::collective_stats(r);
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].count, 3);
  EXPECT_EQ(stats[0].time_ns, INT64_MAX);
  EXPECT_EQ(stats[0].sized_time_ns, INT64_MAX);
  EXPECT_EQ(stats[0].bytes, INT64_MAX);
  EXPECT_GT(*stats[0].algbw_gbps(), 0.0);
}

TEST(Collectives, KindsFromEveryNameFamily) {
  using model::collective_from_kernel_name;
  using model::collective_from_op_name;
  EXPECT_EQ(
      collective_from_kernel_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
      CollectiveKind::AllReduce);
  EXPECT_EQ(collective_from_kernel_name("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            CollectiveKind::AllGather);
  EXPECT_EQ(collective_from_kernel_name("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(x)"),
            CollectiveKind::ReduceScatter);
  EXPECT_EQ(collective_from_kernel_name("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)"),
            CollectiveKind::SendRecv);
  EXPECT_EQ(collective_from_kernel_name("ncclDevKernel_Generic"), CollectiveKind::Unknown);
  EXPECT_EQ(collective_from_op_name("_allgather_base"), CollectiveKind::AllGather);
  EXPECT_EQ(collective_from_op_name("reduce_scatter_tensor_coalesced"), CollectiveKind::ReduceScatter);
  EXPECT_EQ(collective_from_op_name("nccl:all_reduce"), CollectiveKind::AllReduce);
  EXPECT_EQ(collective_from_op_name("broadcast"), CollectiveKind::Broadcast);
  EXPECT_EQ(collective_from_op_name("all_to_all"), CollectiveKind::AllToAll);
  EXPECT_EQ(model::classify_device_name("Memcpy DtoH (Device -> Pinned)"), model::IntervalClass::Memory);
  EXPECT_EQ(model::classify_device_name("Stream Wait Event"), model::IntervalClass::Sync);
  EXPECT_EQ(model::classify_device_name("void foo_kernel<float>()"), model::IntervalClass::Compute);
  EXPECT_EQ(model::classify_device_name("void copy_Memcpy_like()"), model::IntervalClass::Other);
}

TEST(Stragglers, TheLateRankIsFoundByInstanceNotByClock) {
  test::TempDir dir;
  test::TrainerTraceOptions a, b;
  b.rank = 1;
  b.comm_delay_ns = 70'000;  // every collective of rank 1 starts 70 µs late
  test::write_trainer_trace(dir.path() / "trace.rank0.json", a);
  test::write_trainer_trace(dir.path() / "trace.rank1.json", b);
  plugins::LoadResult loaded = plugins::load({dir.path()});
  ASSERT_EQ(loaded.trace.ranks.size(), 2u);
  metrics::Stragglers s = metrics::find_stragglers(loaded.trace);
  ASSERT_EQ(s.not_applicable, metrics::StragglersNa::None);
  ASSERT_FALSE(s.instances.empty());
  for (const auto& i : s.instances) {
    EXPECT_EQ(i.last_rank, 1);
    EXPECT_GE(i.late_by_ns, 70'000);
  }
  EXPECT_EQ(s.ranks[1].times_last, s.instances.size());
  EXPECT_EQ(s.ranks[0].times_last, 0u);
}

TEST(MemoryModel, ZeroPaperNumbers) {
  // Ψ = 7.5e9, N = 64, K = 12: 120, 31.4, 16.6 and 1.9 GB (Rajbhandari et al., figure 1).
  sizing::MemoryConfig c;
  c.params = 7.5e9;
  c.world = 64;
  const double expected[] = {120.0, 31.4, 16.6, 1.9};
  for (int s = 0; s <= 3; ++s) {
    c.stage = s;
    EXPECT_NEAR(sizing::predict(c).model_states() / 1e9, expected[s], 0.05) << "stage " << s;
  }
  ASSERT_TRUE(sizing::apply_dtype(c, "fp32"));
  c.stage = 0;
  EXPECT_DOUBLE_EQ(sizing::predict(c).model_states(), 16 * 7.5e9);  // 4 + 4 + 8
  c.offload = true;
  c.stage = 3;
  EXPECT_DOUBLE_EQ(sizing::predict(c).model_states(), 0.0);
  EXPECT_DOUBLE_EQ(sizing::predict(c).host_offloaded, 16 * 7.5e9 / 64);
}

TEST(MemoryModel, MeasuredBesidePredictedNamesTheCategoryThatDeparts) {
  test::TempDir dir;
  test::TrainerTraceOptions o;
  o.optimizer_scale = 1.5;  // the optimizer state measures 50 % above the model
  test::write_trainer_trace(dir.path() / "t.json", o);
  plugins::LoadResult loaded = plugins::load({dir.path() / "t.json"});
  metrics::RankMemory m = metrics::compare_memory(loaded.trace.ranks[0]);
  ASSERT_TRUE(m.config.has_value());
  EXPECT_EQ(m.config->stage, 3);
  EXPECT_EQ(m.config->world, 2);
  EXPECT_DOUBLE_EQ(m.config->params, 4e6);
  ASSERT_TRUE(m.departs_most);
  EXPECT_EQ(m.rows[*m.departs_most].category, "optimizer_state");
  EXPECT_FALSE(m.all_agree);
  EXPECT_NEAR(*m.rows[*m.departs_most].measured / *m.rows[*m.departs_most].predicted, 1.5, 1e-9);
}

}  // namespace

namespace {

using shardscope::model::AllocatorEvent;
using shardscope::model::CounterSeries;

// Two categories and the allocator total (times 100, 200, 300): the categories hold the most at 200, 50 + 300
// = 350 of the total's 2000, so the rest is 1650. An allocator event at 150 says 400 allocated and `reserved`
// reserved: the caching allocator holds reserved - 400 free then.
model::Rank rest_rank(int64_t reserved) {
  model::Rank r;
  r.counters.push_back(CounterSeries{"memory.sharded_params", {{100, 50}}});
  r.counters.push_back(CounterSeries{"memory.activations", {{100, 0}, {200, 300}, {300, 0}}});
  r.counters.push_back(CounterSeries{"memory.allocator_total", {{100, 1000}, {200, 2000}, {300, 1500}}});
  AllocatorEvent a;
  a.ts_ns = 150, a.bytes = 300, a.total_allocated = 400, a.total_reserved = reserved;
  r.allocator.push_back(a);
  a.ts_ns = 250, a.bytes = -300, a.total_allocated = 100;  // after the fullest moment: not the one read
  r.allocator.push_back(a);
  r.finalize();
  return r;
}

const metrics::MemoryRow* row_named(const metrics::RankMemory& m, const std::string& c) {
  for (const metrics::MemoryRow& row : m.rows)
    if (row.category == c) return &row;
  return nullptr;
}

}  // namespace

TEST(MemoryModel, RestSplitsIntoCachedFreeAndOtherAllocatedWhereTheTraceGivesReserved) {
  const metrics::RankMemory m = metrics::compare_memory(rest_rank(1000));
  EXPECT_EQ(row_named(m, "rest"), nullptr);
  const metrics::MemoryRow* cached = row_named(m, "cached_free");
  const metrics::MemoryRow* other = row_named(m, "other_allocated");
  ASSERT_TRUE(cached && other);
  EXPECT_DOUBLE_EQ(*cached->measured, 600);  // 1000 reserved - 400 allocated
  EXPECT_DOUBLE_EQ(*other->measured, 1050);  // the rest 1650 - 600
  EXPECT_DOUBLE_EQ(*cached->at_fullest, 600);
  // The rows add up to the allocator total at the fullest moment: 50 + 300 + 600 + 1050 = 2000.
  double sum = 0;
  for (const metrics::MemoryRow& row : m.rows)
    if (row.category != "allocator_total" && row.at_fullest) sum += *row.at_fullest;
  EXPECT_DOUBLE_EQ(sum, 2000);
  EXPECT_FALSE(cached->predicted);
  EXPECT_EQ(cached->predicted_na.code, sizing::MemoryNa::Code::Rest);
}

TEST(MemoryModel, RestStaysWholeWithoutAReservedTotal) {
  const metrics::RankMemory m = metrics::compare_memory(rest_rank(-1));
  const metrics::MemoryRow* rest = row_named(m, "rest");
  ASSERT_NE(rest, nullptr);
  EXPECT_DOUBLE_EQ(*rest->measured, 1650);
  EXPECT_EQ(row_named(m, "cached_free"), nullptr);
}

namespace {

// rest_rank's categories and total without allocator events, and the caching allocator's reserved and
// allocated bytes sampled with the total (as shardscope-train writes them on a GPU): at the fullest moment
// (200) `reserved` reserved and `allocated` allocated.
model::Rank counters_rank(double reserved, double allocated) {
  model::Rank r;
  r.counters.push_back(CounterSeries{"memory.sharded_params", {{100, 50}}});
  r.counters.push_back(CounterSeries{"memory.activations", {{100, 0}, {200, 300}, {300, 0}}});
  r.counters.push_back(CounterSeries{"memory.allocator_total", {{100, 1000}, {200, 2000}, {300, 1500}}});
  r.counters.push_back(CounterSeries{"memory.allocator_reserved", {{100, 900}, {200, reserved}, {300, 1400}}});
  r.counters.push_back(CounterSeries{"memory.allocator_allocated", {{100, 100}, {200, allocated}, {300, 200}}});
  r.finalize();
  return r;
}

}  // namespace

TEST(MemoryModel, RestSplitsThreeWaysWhereTheTraceSamplesTheAllocatorsReservedAndAllocated) {
  const metrics::RankMemory m = metrics::compare_memory(counters_rank(1800, 900));
  EXPECT_EQ(row_named(m, "rest"), nullptr);
  const metrics::MemoryRow* cached = row_named(m, "cached_free");
  const metrics::MemoryRow* other = row_named(m, "other_allocated");
  const metrics::MemoryRow* outside = row_named(m, "outside_allocator");
  ASSERT_TRUE(cached && other && outside);
  EXPECT_DOUBLE_EQ(*cached->at_fullest, 900);   // 1800 reserved - 900 allocated
  EXPECT_DOUBLE_EQ(*other->at_fullest, 550);    // 900 allocated - the categories' 50 + 300
  EXPECT_DOUBLE_EQ(*outside->at_fullest, 200);  // 2000 used on the device - 1800 reserved
  double sum = 0;
  for (const metrics::MemoryRow& row : m.rows)
    if (row.category != "allocator_total" && row.at_fullest) sum += *row.at_fullest;
  EXPECT_DOUBLE_EQ(sum, 2000);
  EXPECT_EQ(outside->predicted_na.code, sizing::MemoryNa::Code::Rest);
  EXPECT_EQ(outside->predicted_na.text, "outside_allocator");
}

TEST(MemoryModel, WithTheDeviceAndTheReserveAloneTheRestIsReservedAndOutside) {
  // The injection library's pair, sampled at each cudaMalloc and cudaFree; no category, no allocated total.
  auto rank = [](double reserved_at_200) {
    model::Rank r;
    r.counters.push_back(CounterSeries{"memory.allocator_total", {{100, 600}, {200, 2500}, {300, 2100}}});
    r.counters.push_back(CounterSeries{"memory.allocator_reserved", {{100, 0}, {200, reserved_at_200}, {300, 1500}}});
    r.finalize();
    return r;
  };
  const metrics::RankMemory m = metrics::compare_memory(rank(1900));
  EXPECT_EQ(row_named(m, "rest"), nullptr);
  const metrics::MemoryRow* reserved = row_named(m, "allocator_reserved");
  const metrics::MemoryRow* outside = row_named(m, "outside_allocator");
  ASSERT_TRUE(reserved && outside);
  // At the device's fullest sample (200), not the first, where no category tells one moment from another.
  EXPECT_DOUBLE_EQ(*reserved->at_fullest, 1900);
  EXPECT_DOUBLE_EQ(*outside->at_fullest, 600);  // 2500 used - 1900 reserved
  EXPECT_EQ(reserved->predicted_na.text, "allocator_reserved");
  // More reserved than the device uses: samples that disagree split nothing.
  EXPECT_NE(row_named(metrics::compare_memory(rank(2600)), "rest"), nullptr);
}

TEST(MemoryModel, RestStaysWholeWhereTheAllocatorsSamplesCannotBothHold) {
  // 300 allocated is less than the 350 the categories count at that moment: no part is made up.
  const metrics::RankMemory m = metrics::compare_memory(counters_rank(1800, 300));
  ASSERT_NE(row_named(m, "rest"), nullptr);
  EXPECT_DOUBLE_EQ(*row_named(m, "rest")->measured, 1650);
  EXPECT_EQ(row_named(m, "outside_allocator"), nullptr);
}

namespace {

// A comparison with only the activations: the estimate for `c` and `measured` bytes measured.
metrics::RankMemory activations_only(const sizing::ActivationConfig& c, double measured) {
  metrics::RankMemory m;
  m.activations = sizing::predict_activations(c);
  metrics::MemoryRow row;
  row.category = "activations";
  row.measured = measured;
  m.rows.push_back(row);
  return m;
}

sizing::ActivationConfig h100_shape(double ffn) {
  sizing::ActivationConfig c;
  c.seq_len = 1024, c.batch = 8, c.hidden = 768, c.heads = 12, c.layers = 12, c.bytes_per_element = 4;
  c.ffn_dim = ffn;
  return c;
}

}  // namespace

TEST(MemoryModel, ActivationEstimateWithinFifteenPercentOrNamesTheAssumption) {
  using Why = metrics::ActivationCheck::Why;
  // Korthikanti at fp32 (x2), s·b·h = 6,291,456, 5·a·s/h = 80: 6,291,456 × 114 × 2 × 12 = 17,213,423,616;
  // the trainer's H100 run measured 11,126,178,000 (-35 %). Without the scores: 6,291,456 × 34 × 2 × 12 =
  // 5,133,828,096 (-54 % off); with checkpointing: 6,291,456 × 2 × 2 × 12 + 1,434,451,968 = 1,736,441,856:
  // neither within, so the paper's layer is named.
  auto c = metrics::check_activations(activations_only(h100_shape(0), 11'126'178'000.0));
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->predicted, 17'213'423'616.0);
  EXPECT_FALSE(c->within);
  EXPECT_EQ(c->why, Why::PaperLayer);
  // 5.5 GB measured: the estimate without the scores, 5,133,828,096, is 7 % off: the scores explain it.
  c = metrics::check_activations(activations_only(h100_shape(0), 5.5e9));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->why, Why::ScoresKept);
  EXPECT_DOUBLE_EQ(c->alternative, 5'133'828'096.0);
  // 17.0 GB: 1.2 % below the estimate.
  c = metrics::check_activations(activations_only(h100_shape(0), 17.0e9));
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->within);
  EXPECT_EQ(c->why, Why::None);
  // The trainer's block on the same run: 922,746,880 a layer × 12 = 11,072,962,560, +0.5 %.
  c = metrics::check_activations(activations_only(h100_shape(2048), 11'126'178'000.0));
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->predicted, 11'072'962'560.0);
  EXPECT_TRUE(c->within);
  // A tenth of it: no flip lands within (no scores: 4 × (10·S + 4·F) × 12 = 6,241,124,352; checkpointing:
  // 2 × 2 × S × 12 + 922,746,880 = 1,224,736,768), and the block is the trainer's own: unexplained.
  c = metrics::check_activations(activations_only(h100_shape(2048), 1.0e9));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->why, Why::Unexplained);
}
