// FSDP2's record_function labels in a PyTorch trace give the prefetch check its units: a generated trace in
// Kineto's shape where each unit's pre-backward hook either prefetches the next unit's all-gather ("pre") or
// the next unit gathers for itself in its own hook ("none").
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include <fmt/format.h>

#include "analyzer/metrics/prefetch.h"
#include "plugins/kineto/kineto_keys.h"
#include "plugins/load/load.h"
#include "tests/plugins/kineto_writer.h"
#include "tests/support/temp_dir.h"

using namespace shardscope;

namespace {

class Fsdp2Trace {
 public:
  // Times in µs. The device runs a kernel 5 µs after its launch at the earliest, one at a time per stream.
  std::string build(bool prefetch) {
    cpu("ProfilerStep#1", 0, 100000);
    for (int u = 0; u < 3; ++u) {
      int64_t c = 10 + u * 200;
      cpu(fmt::format("FSDP::pre_forward (layers.{})", u), c, 20);
      gather(u, c + 1);
      compute(u, c + 10, {});
    }
    int64_t c = 1000;
    for (int u = 2; u >= 0; --u, c += 150) {
      cpu(fmt::format("FSDP::pre_backward (layers.{})", u), c, 10);
      if (u == 2 || !prefetch) gather(u, c + 1);    // its own all-gather, in its own hook
      if (prefetch && u > 0) gather(u - 1, c + 4);  // BACKWARD_PRE: the next unit's, before this one computes
      int64_t end = compute(u, c + 11, ag_end_[u]);
      cpu(fmt::format("FSDP::post_backward_reduce (layers.{})", u), c + 14, 3);
      kernel("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(x)", 20, launch(c + 15), std::max(end, c + 20), 30,
             R"(, "Collective name": "_reduce_scatter_base")");
    }
    return w_.file();
  }

 private:
  void cpu(const std::string& name, int64_t ts, int64_t dur) { w_.cpu(100, name, ts, dur); }
  int launch(int64_t ts) { return w_.launch(ts); }
  int64_t kernel(const std::string& name, int stream, int corr, int64_t not_before, int64_t dur,
                 const std::string& extra = "") {
    return w_.kernel(name, stream, corr, not_before, dur, extra);
  }
  void gather(int unit, int64_t c) {
    cpu(fmt::format("FSDP::all_gather (layers.{})", unit), c, 3);
    ag_end_[unit] = kernel("ncclDevKernel_AllGather_RING_LL(x)", 20, launch(c + 1), 0, 50,
                           R"(, "Collective name": "_allgather_base")");
  }
  // Three 40 µs kernels after the unit's all-gather; returns when the last ends.
  int64_t compute(int unit, int64_t c, int64_t after) {
    int64_t end = 0;
    for (int k = 0; k < 3; ++k) end = kernel("gemm", 7, launch(c + k), std::max(after, ag_end_[unit]), 40);
    return end;
  }
  test::KinetoWriter w_;
  std::map<int, int64_t> ag_end_;
};

metrics::RankPrefetch check(bool prefetch, std::vector<std::string>* units = nullptr) {
  test::TempDir d;
  std::ofstream(d.path() / "fsdp2.json") << Fsdp2Trace().build(prefetch);
  plugins::LoadResult r = plugins::load({d.path() / "fsdp2.json"});
  const model::Rank& rank = r.trace.ranks.at(0);
  if (units) *units = rank.metadata[kineto_keys::kFsdpUnits].get<std::vector<std::string>>();
  return metrics::check_prefetch(rank);
}

TEST(Fsdp2Labels, BackwardPrefetchIsFoundEffective) {
  std::vector<std::string> units;
  metrics::RankPrefetch p = check(true, &units);
  EXPECT_EQ(units, (std::vector<std::string>{"layers.0", "layers.1", "layers.2"}));
  ASSERT_EQ(p.steps.size(), 1u);
  const metrics::StepPrefetch& s = p.steps[0];
  EXPECT_EQ(s.verdict, metrics::Verdict::Effective) << int(s.cause);
  ASSERT_EQ(s.units.size(), 2u);  // pairs (layers.2 -> layers.1), (layers.1 -> layers.0)
  EXPECT_EQ(s.units[0].unit, 2);
  EXPECT_EQ(s.units[0].next_unit, 1);
  for (const auto& u : s.units) {
    EXPECT_GT(u.issue_lead_ns, 0);
    EXPECT_GT(u.hidden_share(), 0.5);
  }
}

TEST(Fsdp2Labels, WithoutPrefetchTheAllGathersAreIssuedLate) {
  metrics::RankPrefetch p = check(false);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].verdict, metrics::Verdict::NotEffective);
  EXPECT_EQ(p.steps[0].cause, metrics::Cause::IssuedLate);
}

}  // namespace
