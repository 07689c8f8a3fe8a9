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
