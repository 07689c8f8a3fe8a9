// FSDP on Nsight input: the real 2-rank PyTorch FSDP traces from an H100 (tests/data/h100_nccl2, Kineto JSON)
// written, in this test, as one Nsight Systems export of two processes in the export's schema (kernels,
// copies, sets and stream syncs in CUPTI_ACTIVITY_KIND_*, CUDA calls in _RUNTIME with their correlationId,
// the CPU ops and record_function labels as the NVTX ranges emit_nvtx writes, "name, op_id = N", strings
// through StringIds, each process's RANK in META_DATA_CAPTURE). The same events reach the model and the
// prefetch check gives the same verdict, step by step, as on the JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include "plugins/load/load.h"
#include "tests/plugins/nsys_support.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace shardscope;

namespace {

class Writer {
 public:
  explicit Writer(const fs::path& file) : db_(file, true) { db_.exec("BEGIN;" + test::export_tables_sql()); }
  ~Writer() { db_.exec("COMMIT"); }

  // One Kineto rank as process `pid`. Returns what was written, by table.
  std::map<std::string, int> add_rank(const json& trace, int pid) {
    std::map<std::string, int> n;
    const int64_t base = trace.value("baseTimeNanoseconds", int64_t(0));
    if (!base_) {
      base_ = base;
      db_.exec(fmt::format("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES ({}, '', '', 0)", base));
    }
    const int rank = trace["distributedInfo"]["rank"].get<int>();
    db_.exec(
        fmt::format("INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_{0}:PID', '{1}'), "
                    "('PROCESS_{0}:ENVIRONMENT_VARIABLE', 'RANK=\"{2}\"'),"
                    "('PROCESS_{0}:ENVIRONMENT_VARIABLE', 'WORLD_SIZE=\"2\"')",
                    pid, pid, rank));
    const int64_t gpid = (int64_t(1) << 48) | (int64_t(pid) << 24);
    db_.exec(fmt::format("INSERT INTO PROCESSES VALUES ({}, {}, 'python3')", gpid, pid));
    // Times onto the session: Kineto's µs (3 decimals) from baseTimeNanoseconds, as ns from the session start.
    auto ns = [&](double us) { return int64_t(std::llround(us * 1000.0)) + (base - base_); };
    int64_t op_id = 0;
    for (const json& e : trace["traceEvents"]) {
      if (e.value("ph", "") != "X" || !e.contains("dur") || !e["ts"].is_number() || !e["tid"].is_number_integer())
        continue;
      const std::string cat = e.value("cat", ""), name = e.value("name", "");
      const json args = e.value("args", json::object());
      const int64_t start = ns(e["ts"].get<double>()), end = ns(e["ts"].get<double>() + e["dur"].get<double>());
      const std::string corr =
          args.contains("correlation") ? std::to_string(args["correlation"].get<int64_t>()) : "NULL";
      const int64_t device = args.value("device", int64_t(0)), stream = args.value("stream", int64_t(-1));
      if (cat == "kernel") {
        db_.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({}, {}, {}, {}, {}, {}, {}, {})", start,
                             end, device, stream, corr, gpid, id(name), id(name)));
      } else if (cat == "gpu_memcpy") {
        const int kind = name.find("HtoD") != std::string::npos ? 1 : name.find("DtoH") != std::string::npos ? 2 : 8;
        db_.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES ({}, {}, {}, {}, {}, {}, {}, {})", start,
                             end, device, stream, corr, gpid, args.value("bytes", int64_t(0)), kind));
      } else if (cat == "gpu_memset") {
        db_.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES ({}, {}, {}, {}, {}, {}, 0, {})", start,
                             end, device, stream, corr, gpid, args.value("bytes", int64_t(0))));
      } else if (cat == "cuda_sync") {
        const int type = name == "Stream Wait Event" ? 2 : name == "Stream Sync" ? 3 : name == "Context Sync" ? 4 : 1;
        db_.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES ({}, {}, {}, {}, {}, {}, {})",
                             start, end, device, stream < 0 ? std::string("NULL") : std::to_string(stream), corr, gpid,
                             type));
      } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
        db_.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 0, {}, {}, {}, 0)", start, end,
                             gpid | (e["tid"].get<int64_t>() & 0xFFFFFF), corr, id(name + "_v7000")));
      } else if (cat == "cpu_op" || cat == "user_annotation") {
        // emit_nvtx: the op's name, then its op_id.
        db_.exec(fmt::format("INSERT INTO NVTX_EVENTS VALUES ({}, {}, 59, '{}, op_id = {}', {}, NULL, 0)", start, end,
                             quote(name), ++op_id, gpid | (e["tid"].get<int64_t>() & 0xFFFFFF)));
      } else {
        continue;
      }
      ++n[cat];
    }
    return n;
  }

 private:
  static std::string quote(const std::string& s) {
    std::string out;
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out;
  }
  int64_t id(const std::string& s) {
    auto [it, fresh] = ids_.try_emplace(s, int64_t(ids_.size()) + 1);
    if (fresh) db_.exec(fmt::format("INSERT INTO StringIds VALUES ({}, '{}')", it->second, quote(s)));
    return it->second;
  }
  test::Sql db_;
  std::map<std::string, int64_t> ids_;
  int64_t base_ = 0;
};

std::map<std::string, size_t> device_classes(const model::Rank& r) {
  std::map<std::string, size_t> out;
  for (const model::Track& t : r.tracks)
    for (const model::Event& e : t.events)
      if (e.is_device()) {
        ++out[std::string(model::to_string(e.cls))];
        if (e.issued_ns != model::kUnknown) ++out["launched"];
        if (e.unit >= 0) ++out["with unit"];
      }
  return out;
}

struct Run {
  const char* dir;
  const char* verdict;  // what the timeline shows (tests/analyzer/h100_verdicts_test.cc)
};
void PrintTo(const Run& r, std::ostream* os) { *os << r.dir; }

class NsysFsdp : public ::testing::TestWithParam<Run> {};

TEST_P(NsysFsdp, SameEventsSameVerdictAsTheJson) {
  const fs::path dir = fs::path(SHARDSCOPE_DATA_DIR) / "h100_nccl2" / GetParam().dir;
  test::TempDir d;
  const fs::path db = d.path() / "fsdp.sqlite";
  {
    Writer w(db);
    for (int r = 0; r < 2; ++r) {
      auto n = w.add_rank(test::read_gz_json(dir / fmt::format("rank{}.json.gz", r)),
                          4000 - 100 * r);  // rank 1 has the lower pid
      EXPECT_GT(n["kernel"], 100);
      EXPECT_GT(n["user_annotation"], 10);
    }
  }
  plugins::LoadResult json_run = plugins::load({dir}), nsys_run = plugins::load({db});
  ASSERT_EQ(nsys_run.trace.ranks.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    const model::Rank &a = json_run.trace.ranks[r], &b = nsys_run.trace.ranks[r];
    EXPECT_EQ(b.rank, int(r));  // from RANK, not pid order
    EXPECT_EQ(device_classes(b), device_classes(a)) << "rank " << r;
    EXPECT_EQ(b.steps.size(), a.steps.size());
    EXPECT_EQ(b.metadata.value("fsdp_units", json()),
              a.metadata.value("fsdp_units", json()));  // the unit names, by number
    EXPECT_EQ(b.unit_identity, a.unit_identity);
    EXPECT_GT(device_classes(b)["with unit"], 0u);  // the all-gathers got their units
    EXPECT_FALSE(b.metadata.value("fsdp_units", json()).empty());
  }
  auto from_json = test::run({SHARDSCOPE_BIN, "check-prefetch", dir.string(), "--format", "json"});
  auto from_nsys = test::run({SHARDSCOPE_BIN, "check-prefetch", db.string(), "--format", "json"});
  EXPECT_EQ(from_nsys.rc, from_json.rc) << from_nsys.err;
  json a = json::parse(from_json.out, nullptr, false), b = json::parse(from_nsys.out, nullptr, false);
  ASSERT_FALSE(a.is_discarded()) << from_json.out;
  ASSERT_FALSE(b.is_discarded()) << from_nsys.out << from_nsys.err;
  ASSERT_EQ(b["ranks"].size(), a["ranks"].size());
  ASSERT_EQ(a["ranks"].size(), 2u);
  size_t pairs = 0;
  for (size_t r = 0; r < a["ranks"].size(); ++r) {
    const json &ra = a["ranks"][r], &rb = b["ranks"][r];
    EXPECT_EQ(rb["verdict"], ra["verdict"]) << from_nsys.out;
    EXPECT_EQ(rb["verdict"], GetParam().verdict) << from_nsys.out;
    ASSERT_EQ(rb["steps"].size(), ra["steps"].size());
    for (size_t s = 0; s < ra["steps"].size(); ++s) {
      EXPECT_EQ(rb["steps"][s]["verdict"], ra["steps"][s]["verdict"]);
      EXPECT_EQ(rb["steps"][s].value("cause", json()), ra["steps"][s].value("cause", json()));
      EXPECT_EQ(rb["steps"][s]["units"].size(), ra["steps"][s]["units"].size());
      pairs += rb["steps"][s]["units"].size();
    }
  }
  EXPECT_GT(pairs, 0u);  // unit pairs were checked, not an empty verdict
}

INSTANTIATE_TEST_SUITE_P(H100, NsysFsdp,
                         ::testing::Values(Run{"pytorch_fsdp1_backward_pre", "effective"},
                                           Run{"pytorch_fsdp1_backward_none", "not effective"},
                                           Run{"pytorch_fsdp2", "effective"}),
                         [](const ::testing::TestParamInfo<Run>& i) { return std::string(i.param.dir); });

}  // namespace
