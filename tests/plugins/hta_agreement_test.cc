// The whole-trace breakdown agrees with Holistic Trace Analysis on the real PyTorch-profiler traces in
// tests/data (reference values: tests/data/README.md) to 0.01 percentage point, and every NCCL kernel in
// them gets its collective kind. HTA prints its percentages to two decimals, so 0.01 is the finest
// agreement its numbers can show (measured: at most 0.005 on every trace and figure).
#include <gtest/gtest.h>

#include <filesystem>

#include "analyzer/metrics/breakdown.h"
#include "model/classify.h"
#include "plugins/load/load.h"

namespace fs = std::filesystem;
using namespace shardscope;

namespace {

const fs::path kShared = fs::path(SHARDSCOPE_DATA_DIR);

struct Reference {
  const char* file;
  int rank;
  double overlap, idle, compute, non_compute;
  int64_t window_us;
  bool whole_us;  // its device events' times are whole µs (the others carry ns as µs with 3 decimals)
};

// Copied from HTA_REFERENCE.md (HTA at f4d0062c, include_last_profiler_step=True).
const Reference kReference[] = {
    {"hta_nccl_parser_config/nccl_data.json.gz", 0, 15.14, 76.68, 17.11, 6.21, 660550, false},
    {"hta_trace_filter/sampled_rank-0.json.gz", 0, 14.95, 55.21, 17.20, 27.59, 1222847, true},
    {"hta_trace_filter/sampled_rank-1.json.gz", 1, 19.93, 52.89, 22.09, 25.02, 1231186, true},
    {"hta_trace_diff/control/control.json.gz", 3, 46.24, 16.36, 60.56, 23.08, 464594, true},
    {"hta_trace_diff/test/test.json.gz", 1, 69.07, 6.94, 69.12, 23.94, 744514, true},
    // HTA counts one cpu_op here (a Triton launch whose args carry a "stream" input) as GPU activity, because
    // it selects GPU events by `stream != -1`: an HTA bug shardscope does not copy (it moves idle by 0.08 pp
    // and compute by 0.09 pp). The test applies HTA's selection to compare (with_htas_selection).
    {"tracelens_b200/eager_trace.json.gz", 0, 0.00, 87.20, 12.02, 0.79, 84486, false},
};

void PrintTo(const Reference& r, std::ostream* os) { *os << r.file; }

class HtaAgreement : public ::testing::TestWithParam<Reference> {};

// The rank as HTA selects its GPU events: every complete event whose args carry a `stream` other than -1,
// host ones too, on a device track with HTA's class for its name. Returns how many host events it moved.
size_t with_htas_selection(model::Rank& rank, const model::EventArgs& args) {
  const model::StringId stream = rank.strings.find("stream");
  model::Track moved{-1, -1, "host events HTA takes for GPU work", model::TrackKind::DeviceStream, {}};
  for (uint32_t t = 0; t < rank.tracks.size(); ++t)
    for (uint32_t i = 0; i < rank.tracks[t].events.size(); ++i) {
      const model::Event& e = rank.tracks[t].events[i];
      if (e.is_device() || e.ph != 'X' || !stream) continue;
      auto v = args.find(t, i, stream);
      if (!v || v->kind != model::ArgKind::Int || v->i == -1) continue;
      model::Event g = e;
      g.cls = model::hta_device_class(rank.str(e.name));
      moved.events.push_back(g);
    }
  size_t n = moved.events.size();
  if (n) rank.tracks.push_back(std::move(moved));
  return n;
}

TEST_P(HtaAgreement, WholeTraceBreakdownWithinAHundredthOfAPoint) {
  const Reference& ref = GetParam();
  fs::path file = kShared / ref.file;
  ASSERT_TRUE(fs::exists(file)) << file << " is missing: tests/data holds it";
  plugins::LoadResult loaded = plugins::load({file}, {.keep_args = true});
  ASSERT_EQ(loaded.trace.ranks.size(), 1u);
  model::Rank& rank = loaded.trace.ranks[0];
  EXPECT_EQ(rank.format, "kineto");
  // Only the B200 trace has a host event HTA takes for GPU work (the Triton launch above).
  EXPECT_EQ(with_htas_selection(rank, loaded.trace.args[0]),
            std::string_view(ref.file).starts_with("tracelens_b200") ? 1u : 0u);
  auto b = metrics::hta_breakdown(rank);
  ASSERT_TRUE(b.has_value());
  ASSERT_TRUE(b->overlap_pct().has_value());
  EXPECT_NEAR(*b->overlap_pct(), ref.overlap, 0.01);
  EXPECT_NEAR(b->idle_pct(), ref.idle, 0.01);
  EXPECT_NEAR(b->compute_pct(), ref.compute, 0.01);
  EXPECT_NEAR(b->non_compute_pct(), ref.non_compute, 0.01);
  EXPECT_NEAR(double(b->window_us), double(ref.window_us), 2.0);
  // The exact figures beside HTA's: on traces in whole µs the same numbers; on those with ns the events' own
  // (nccl_data: busy 157.500 ms exact, 154.038 in HTA's µs).
  const metrics::WindowMetrics x = b->exact();
  if (!ref.whole_us) {
    EXPECT_GT(x.busy_ns, b->busy_us * 1000);
    return;
  }
  EXPECT_EQ(x.window_ns, b->window_us * 1000);
  EXPECT_EQ(x.busy_ns, b->busy_us * 1000);
  EXPECT_EQ(x.compute_ns, b->compute_us * 1000);
  EXPECT_EQ(x.comm_ns, b->comm_us * 1000);
  EXPECT_EQ(x.overlap_ns, b->overlap_us * 1000);
}

// Without HTA's selection, shardscope's own reading of the B200 trace departs from HTA's by the one Triton
// launch it rightly leaves on the host: compute 74.391 µs of the 84,486 µs window lower (0.088 pp).
TEST(HtaAgreement, TheTritonLaunchHtaMistakesForGpuWorkIsTheWholeDifference) {
  plugins::LoadResult loaded = plugins::load({kShared / "tracelens_b200/eager_trace.json.gz"});
  auto b = metrics::hta_breakdown(loaded.trace.ranks.at(0));
  ASSERT_TRUE(b.has_value());
  EXPECT_NEAR(b->compute_pct(), 12.02 - 100.0 * 74.391 / 84486, 0.01);
  EXPECT_GT(12.02 - b->compute_pct(), 0.05);
}

TEST_P(HtaAgreement, EveryNcclKernelHasItsCollectiveKind) {
  const Reference& ref = GetParam();
  fs::path file = kShared / ref.file;
  ASSERT_TRUE(fs::exists(file)) << file << " is missing: tests/data holds it";
  plugins::LoadResult loaded = plugins::load({file});
  const model::Rank& rank = loaded.trace.ranks[0];
  size_t nccl = 0;
  for (const model::Track& t : rank.tracks)
    for (const model::Event& e : t.events) {
      if (rank.str(e.name).find("nccl") == std::string_view::npos || !e.is_device()) continue;
      ++nccl;
      EXPECT_EQ(e.cls, model::IntervalClass::Communication) << rank.str(e.name);
      EXPECT_NE(e.coll, model::CollectiveKind::None) << rank.str(e.name);
      EXPECT_NE(e.coll, model::CollectiveKind::Unknown) << rank.str(e.name);
    }
  EXPECT_GT(nccl, 0u);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, HtaAgreement, ::testing::ValuesIn(kReference), [](const auto& info) {
  return std::string(fs::path(info.param.file).parent_path().filename().string()) + "_rank" +
         std::to_string(info.param.rank) + "_" + std::to_string(info.index);
});

}  // namespace
