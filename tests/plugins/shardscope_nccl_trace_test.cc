// The trainer's own GPU traces: shardscope-train on 2 ranks of one H100 with NCCL, BACKWARD_PRE and no
// prefetch (tests/data/h100_nccl2/shardscope_train_{pre,none}/). Checks the join of host ranges to
// the device work they launched (plugins/common/gpu_join.h) against what the raw file says itself:
// NCCL's own message sizes on the kernels, the run's unit sizes, the host ranges' issue times.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analyzer/report/report_keys.h"
#include "analyzer/metrics/collectives.h"
#include "plugins/load/load.h"
#include "tests/support/run.h"
#include "tracer/format/keys.h"
#include "tracer/format/reader.h"

using namespace shardscope;
namespace fs = std::filesystem;
namespace k = shardscope::keys;
namespace rk = shardscope::report::report_keys;
using nlohmann::json;

namespace {

const fs::path kRuns = fs::path(SHARDSCOPE_DATA_DIR) / "h100_nccl2";

using Param = std::tuple<const char*, int>;  // (run, rank)

class TrainerNcclTrace : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    auto [run, rank] = GetParam();
    path_ = kRuns / run / fmt::format("trace.rank{}.json.gz", rank);
    ASSERT_TRUE(fs::exists(path_)) << path_ << " is missing: tests/data holds it";
    loaded_ = plugins::load({path_});
    ASSERT_EQ(loaded_.trace.ranks.size(), 1u);
  }
  const model::Rank& rank() const { return loaded_.trace.ranks[0]; }

  fs::path path_;
  plugins::LoadResult loaded_;
};

// NCCL's per-rank message size of each NCCL kernel, by (track name, start), read from the raw file.
std::map<std::pair<std::string, int64_t>, int64_t> nccl_message_bytes(const fs::path& path) {
  trace::TraceFile f = trace::read_trace(path);
  std::map<int64_t, std::string> names;
  for (const trace::Event& e : f.events)
    if (e.ph == 'M' && e.name == k::kThreadName) names[e.tid] = e.args.value(k::kName, "");
  std::map<std::pair<std::string, int64_t>, int64_t> out;
  for (const trace::Event& e : f.events)
    if (e.ph == 'X' && e.cat == k::kCatComm && e.args.contains(k::kArgStream) &&
        e.args.contains(k::kArgNcclMessageBytes))
      out[{names[e.tid], e.ts_ns}] = e.args[k::kArgNcclMessageBytes].get<int64_t>();
  return out;
}

// Every NCCL all-gather and reduce-scatter kernel in a step carries its host collective: the unit, the
// full collective's bytes (2 ranks: twice NCCL's per-rank message, and the unit's padded size in fp32),
// the group of 2, and the compute thread's issue time, before the kernel ran.
TEST_P(TrainerNcclTrace, EveryShardingKernelCarriesItsHostCollective) {
  const model::Rank& r = rank();
  ASSERT_EQ(r.run_config.value(k::kCfgParamDtype, ""), "fp32");
  std::map<int64_t, int64_t> padded;
  for (const json& u : r.run_config[k::kCfgUnits])
    padded[u[k::kCfgUnitId].get<int64_t>()] = u[k::kCfgUnitPaddedParams].get<int64_t>();
  auto message = nccl_message_bytes(path_);
  std::map<model::CollectiveKind, std::vector<size_t>> per_step;
  for (const auto& t : r.tracks)
    for (const auto& e : t.events) {
      if (e.cls != model::IntervalClass::Communication || e.step < 0) continue;
      if (e.coll != model::CollectiveKind::AllGather && e.coll != model::CollectiveKind::ReduceScatter) continue;
      auto& counts = per_step[e.coll];
      counts.resize(r.steps.size());
      ++counts[size_t(e.step)];
      std::string where = fmt::format("{} kernel on {} at {} ns", model::to_string(e.coll), t.name, e.ts_ns);
      ASSERT_GE(e.unit, 0) << where;
      auto m = message.find({t.name, e.ts_ns});
      ASSERT_NE(m, message.end()) << where;
      EXPECT_EQ(e.bytes, 2 * m->second) << where;
      EXPECT_EQ(e.bytes, padded.at(e.unit) * 4) << where;
      EXPECT_EQ(e.group_size, 2) << where;
      ASSERT_NE(e.issued_ns, model::kUnknown) << where;
      EXPECT_LT(e.issued_ns, e.ts_ns) << where;
    }
  ASSERT_GE(r.steps.size(), 3u);
  // Full shard: every unit is gathered for forward and every block again for backward; every unit's
  // gradient reduce-scattered once.
  const size_t units = padded.size(), blocks = units - 1;
  for (size_t s = 0; s < r.steps.size(); ++s) {
    EXPECT_EQ(per_step[model::CollectiveKind::AllGather].at(s), units + blocks) << "step " << s;
    EXPECT_EQ(per_step[model::CollectiveKind::ReduceScatter].at(s), units) << "step " << s;
  }
}

// Each unit's forward and backward compute gets its device time: one derived range (cat fsdp) per host
// range, for every block in every step, starting no earlier than the host range that launched it.
TEST_P(TrainerNcclTrace, EveryBlockHasItsBackwardDeviceTimeInEveryStep) {
  const model::Rank& r = rank();
  const model::StringId fsdp = r.strings.find(k::kCatFsdp), compute = r.strings.find(k::kCatCompute);
  const model::StringId bwd = r.strings.find(k::kUnitBackward), fwd = r.strings.find(k::kUnitForward);
  ASSERT_NE(fsdp, model::kNoString);
  std::map<std::pair<model::StringId, int>, std::vector<const model::Event*>> host, derived;
  for (const auto& t : r.tracks)
    for (const auto& e : t.events) {
      if (e.name != bwd && e.name != fwd) continue;
      if (e.cat == compute) host[{e.name, e.unit}].push_back(&e);
      if (e.cat == fsdp) {
        EXPECT_EQ(t.name, "FSDP units (device time)");
        derived[{e.name, e.unit}].push_back(&e);
      }
    }
  int blocks = 0;
  for (const json& u : r.run_config[k::kCfgUnits])
    if (u.value(k::kName, "").rfind("block", 0) == 0) {
      int unit = u[k::kCfgUnitId].get<int>();
      ++blocks;
      for (model::StringId name : {fwd, bwd}) {
        auto& h = host[{name, unit}];
        auto& d = derived[{name, unit}];
        ASSERT_EQ(d.size(), h.size()) << r.str(name) << " of unit " << unit;
        std::sort(h.begin(), h.end(), [](auto* a, auto* b) { return a->ts_ns < b->ts_ns; });
        std::sort(d.begin(), d.end(), [](auto* a, auto* b) { return a->ts_ns < b->ts_ns; });
        for (size_t i = 0; i < d.size(); ++i) {
          EXPECT_GE(d[i]->ts_ns, h[i]->ts_ns) << r.str(name) << " of unit " << unit;
          EXPECT_GT(d[i]->dur_ns, 0) << r.str(name) << " of unit " << unit;
        }
      }
      // In every step's device window, once.
      for (size_t s = 0; s < r.steps.size(); ++s) {
        auto& d = derived[{bwd, unit}];
        size_t in = std::count_if(d.begin(), d.end(), [&](auto* e) {
          return e->ts_ns >= r.steps[s].start_ns && e->ts_ns < r.steps[s].end_ns;
        });
        EXPECT_EQ(in, 1u) << "unit_backward of unit " << unit << " in step " << s;
      }
    }
  EXPECT_EQ(blocks, 12);
}

// The collectives' sizes and groups reach the per-collective statistics `report` shows.
TEST_P(TrainerNcclTrace, CollectiveStatisticsHaveBytesBandwidthAndGroup) {
  for (const metrics::CollectiveStats& s : metrics::collective_stats(rank())) {
    if (s.kind != model::CollectiveKind::AllGather && s.kind != model::CollectiveKind::ReduceScatter) continue;
    SCOPED_TRACE(std::string(model::to_string(s.kind)));
    EXPECT_EQ(s.sized_count, s.count);  // every instance, not only those inside steps
    EXPECT_EQ(s.group_size, 2);
    ASSERT_TRUE(s.algbw_gbps().has_value());
    ASSERT_TRUE(s.busbw_gbps().has_value());
    EXPECT_DOUBLE_EQ(*s.busbw_gbps(), *s.algbw_gbps() / 2);  // (n-1)/n with n = 2
  }
}

INSTANTIATE_TEST_SUITE_P(H100, TrainerNcclTrace,
                         ::testing::Combine(::testing::Values("shardscope_train_pre", "shardscope_train_none"),
                                            ::testing::Values(0, 1)),
                         [](const ::testing::TestParamInfo<Param>& p) {
                           return fmt::format("{}_rank{}",
                                              std::get<0>(p.param) + std::string("shardscope_train_").size(),
                                              std::get<1>(p.param));
                         });

// `shardscope report` on the run's directory: the collectives table has sizes, bandwidths and groups.
TEST(TrainerNcclReport, CollectivesTableHasNumbers) {
  const fs::path dir = kRuns / "shardscope_train_pre";
  ASSERT_TRUE(fs::exists(dir / "trace.rank0.json.gz")) << dir << " is missing: tests/data holds it";
  test::RunResult run = test::run({SHARDSCOPE_BIN, "report", "--format", "json", dir.string()});
  ASSERT_EQ(run.rc, 0) << run.err;
  json report = json::parse(run.out);
  int checked = 0;
  for (const json& rank : report.at(rk::kRanks))
    for (const json& c : rank.at(rk::kCollectives)) {
      std::string kind = c.value(rk::kKind, "");
      if (kind != k::kAllGather && kind != k::kReduceScatter) continue;
      ++checked;
      for (const char* field : {rk::kBytes, rk::kAlgbwGbps, rk::kBusbwGbps, rk::kGroupSize})
        EXPECT_TRUE(c.contains(field) && c[field].is_number() && c[field].get<double>() > 0)
            << kind << " " << field << ": " << c.dump();
    }
  EXPECT_EQ(checked, 4);  // 2 ranks x (all_gather, reduce_scatter)
}

}  // namespace
