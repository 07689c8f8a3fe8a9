// shardscope-train on Nsight input: the real 2-rank trainer traces from an H100 (tests/data/h100_nccl2/
// shardscope_train_*, shardscope's own format) written, in this test, as one Nsight Systems export of two
// processes in the export's schema: kernels, copies, sets and stream-bound syncs in CUPTI_ACTIVITY_KIND_*,
// CUDA calls in _RUNTIME on their OS threads, NCCL's ranges in its NVTX domain, and the trainer's own ranges
// as the NVTX ranges a CUDA build of its tracer pushes (tracer/host/nvtx.h: the name, the first integer
// argument as int64Value; the collectives around their NCCL call on the comm threads). The same device
// events, units and steps reach the model, and check-prefetch gives the same verdict step by step.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

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

class TrainerExport {
 public:
  // `payloads`: write the trainer's unit/step payloads (int64Value), as a CUDA build of the tracer pushes them.
  TrainerExport(const fs::path& file, bool payloads) : db_(file, true), payloads_(payloads) {
    db_.exec("BEGIN;" + test::export_tables_sql(payloads ? ", int64Value INTEGER, jsonText TEXT" : "") +
             "INSERT INTO NVTX_EVENTS (start, end, eventType, text, domainId) VALUES (0, NULL, 75, 'NCCL', 1);");
  }
  ~TrainerExport() { db_.exec("COMMIT"); }

  // One trainer rank as its own process. Returns what was written, by kind.
  std::map<std::string, int> add_rank(const json& trace) {
    std::map<std::string, int> n;
    const json& h = trace["shardscope"];
    const int64_t pid = h["os_pid"].get<int64_t>(), rank = h["rank"].get<int64_t>();
    if (!base_) {
      // The session starts at the monotonic clock's zero, on the wall clock: times are the monotonic ns.
      base_ = h["clock"]["sync"]["realtime_ns"].get<int64_t>() - h["clock"]["sync"]["monotonic_ns"].get<int64_t>();
      db_.exec(fmt::format("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES ({}, '', '', 0)", base_));
    }
    db_.exec(
        fmt::format("INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_{0}:PID', '{0}'), "
                    "('PROCESS_{0}:ENVIRONMENT_VARIABLE', 'RANK=\"{1}\"'),"
                    "('PROCESS_{0}:ENVIRONMENT_VARIABLE', 'WORLD_SIZE=\"2\"')",
                    pid, rank));
    const int64_t gpid = (int64_t(1) << 48) | (pid << 24);
    db_.exec(fmt::format("INSERT INTO PROCESSES VALUES ({}, {}, 'shardscope-train')", gpid, pid));
    // The trace's tracks to OS threads: its own threads say os_tid, CUPTI's say it in their names.
    std::map<int64_t, int64_t> os;
    for (const json& e : trace["traceEvents"]) {
      if (e.value("ph", "") != "M" || e.value("name", "") != "thread_name") continue;
      const json& a = e["args"];
      const std::string name = a.value("name", "");
      if (a.contains("os_tid")) os[e["tid"].get<int64_t>()] = a["os_tid"].get<int64_t>();
      for (const char* prefix : {"CUDA API thread ", "NVTX thread "})
        if (name.starts_with(prefix))
          os[e["tid"].get<int64_t>()] = std::stoll(name.substr(std::string_view(prefix).size()));
    }
    for (const json& e : trace["traceEvents"]) {
      if (e.value("ph", "") != "X" || !e.contains("dur")) continue;
      const std::string cat = e.value("cat", ""), name = e.value("name", "");
      const json args = e.value("args", json::object());
      const int64_t start = std::llround(e["ts"].get<double>() * 1000.0),
                    end = start + std::llround(e["dur"].get<double>() * 1000.0);
      const std::string corr =
          args.contains("correlation") ? std::to_string(args["correlation"].get<int64_t>()) : "NULL";
      const bool on_stream = args.contains("stream");
      const int64_t device = args.value("device", int64_t(0)), stream = args.value("stream", int64_t(-1));
      auto thread = os.find(e["tid"].get<int64_t>());
      const int64_t gtid = thread == os.end() ? 0 : gpid | thread->second;
      if (on_stream && (cat == "kernel" || cat == "comm")) {
        db_.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({}, {}, {}, {}, {}, {}, {}, {})", start,
                             end, device, stream, corr, gpid, id(name), id(name)));
      } else if (on_stream && cat == "memcpy") {
        const std::string kind = args.value("copy_kind", "");
        const int k = kind == "HtoD" ? 1 : kind == "DtoH" ? 2 : kind == "DtoD" ? 8 : kind == "HtoH" ? 9 : 0;
        db_.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES ({}, {}, {}, {}, {}, {}, {}, {})", start,
                             end, device, stream, corr, gpid, args.value("bytes", int64_t(0)), k));
      } else if (on_stream && cat == "memset") {
        db_.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES ({}, {}, {}, {}, {}, {}, 0, {})", start,
                             end, device, stream, corr, gpid, args.value("bytes", int64_t(0))));
      } else if (on_stream && cat == "sync") {
        const int type = name == "Stream Wait Event"     ? 2
                         : name == "Stream Synchronize"  ? 3
                         : name == "Context Synchronize" ? 4
                                                         : 1;
        db_.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES ({}, {}, {}, {}, {}, {}, {})",
                             start, end, device, stream, corr, gpid, type));
      } else if ((cat == "cuda_runtime" || cat == "cuda_driver") && gtid) {
        db_.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 0, {}, {}, {}, 0)", start, end,
                             gtid, corr, id(name)));
      } else if (cat == "nvtx" && gtid) {
        // NCCL's own ranges, in its domain, with the message size its payload gives.
        const std::string payload =
            payloads_ && args.contains("nccl_message_bytes")
                ? fmt::format("'{{\"Message size [bytes]\": {}}}'", args["nccl_message_bytes"].get<int64_t>())
                : std::string("NULL");
        db_.exec(
            fmt::format("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId{}) VALUES ({}, {}, "
                        "59, '{}', {}, 1{})",
                        payloads_ ? ", jsonText" : "", start, end, name, gtid, payloads_ ? ", " + payload : ""));
      } else if ((cat == "step" || cat == "phase" || cat == "compute" || (cat == "comm" && !on_stream)) && gtid) {
        // The trainer's range: its first integer argument is the payload (step, unit; phases have none).
        std::string value = "NULL";
        for (const char* key : {"step", "unit"})
          if (args.contains(key) && value == "NULL") value = std::to_string(args[key].get<int64_t>());
        db_.exec(
            fmt::format("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId{}) VALUES ({}, {}, "
                        "59, '{}', {}, 0{})",
                        payloads_ ? ", int64Value" : "", start, end, name, gtid, payloads_ ? ", " + value : ""));
        ++n["trainer"];
      } else {
        continue;
      }
      ++n[cat];
    }
    return n;
  }

 private:
  int64_t id(const std::string& s) {
    auto [it, fresh] = ids_.try_emplace(s, int64_t(ids_.size()) + 1);
    if (fresh) {
      sqlite3_stmt* q = nullptr;
      sqlite3_prepare_v2(db_.handle(), "INSERT INTO StringIds VALUES (?, ?)", -1, &q, nullptr);
      sqlite3_bind_int64(q, 1, it->second);
      sqlite3_bind_text(q, 2, s.c_str(), int(s.size()), SQLITE_TRANSIENT);
      sqlite3_step(q);
      sqlite3_finalize(q);
    }
    return it->second;
  }
  test::Sql db_;
  bool payloads_;
  std::map<std::string, int64_t> ids_;
  int64_t base_ = 0;
};

// What the analysis reads of a rank: device events by class, launched and with a unit; each unit's
// derived device-time ranges; the units the all-gather kernels carry.
std::map<std::string, size_t> summary(const model::Rank& r) {
  std::map<std::string, size_t> out;
  for (const model::Track& t : r.tracks)
    for (const model::Event& e : t.events) {
      if (e.is_device()) {
        ++out[std::string(model::to_string(e.cls))];
        if (e.issued_ns != model::kUnknown) ++out["launched"];
        if (e.unit >= 0) ++out[fmt::format("{} of unit {}", model::to_string(e.coll), e.unit)];
        if (e.step >= 0) ++out[fmt::format("in step {}", e.step)];
      } else if (r.str(e.cat) == "fsdp" && e.unit >= 0 &&
                 e.ph == 'X') {  // not the trainer's prefetch instants: no NVTX
        ++out[fmt::format("{} {} device range", r.str(e.name), e.unit)];
      }
    }
  return out;
}

std::vector<int64_t> step_numbers(const model::Rank& r) {
  std::vector<int64_t> out;
  for (const model::Step& s : r.steps) out.push_back(s.number);
  return out;
}

class NsysTrainer : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(NsysTrainer, SameEventsUnitsStepsAndVerdictAsItsOwnFile) {
  const fs::path dir = fs::path(SHARDSCOPE_DATA_DIR) / "h100_nccl2" / GetParam().first;
  test::TempDir d;
  const fs::path db = d.path() / "train.sqlite";
  {
    TrainerExport w(db, true);
    for (int r = 0; r < 2; ++r) {
      auto n = w.add_rank(test::read_gz_json(dir / fmt::format("trace.rank{}.json.gz", r)));
      EXPECT_GT(n["kernel"], 1000);
      EXPECT_GT(n["trainer"], 100);
    }
  }
  plugins::LoadResult own = plugins::load({dir}), nsys = plugins::load({db});
  ASSERT_EQ(nsys.trace.ranks.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    const model::Rank &a = own.trace.ranks[r], &b = nsys.trace.ranks[r];
    EXPECT_EQ(b.rank, int(r));
    const auto sa = summary(a), sb = summary(b);
    EXPECT_EQ(sb, sa) << "rank " << r;
    EXPECT_GT(sb.count("all_gather of unit 12"), 0u);  // units reached the all-gather kernels
    EXPECT_GT(sb.count("unit_backward 12 device range"), 0u);
    EXPECT_EQ(step_numbers(b), step_numbers(a));
    EXPECT_EQ(b.steps.size(), 5u);
  }
  auto from_own = test::run({SHARDSCOPE_BIN, "check-prefetch", dir.string(), "--format", "json"});
  auto from_nsys = test::run({SHARDSCOPE_BIN, "check-prefetch", db.string(), "--format", "json"});
  EXPECT_EQ(from_nsys.rc, from_own.rc) << from_nsys.err;
  json a = json::parse(from_own.out, nullptr, false), b = json::parse(from_nsys.out, nullptr, false);
  ASSERT_FALSE(a.is_discarded()) << from_own.out;
  ASSERT_FALSE(b.is_discarded()) << from_nsys.out << from_nsys.err;
  ASSERT_EQ(a["ranks"].size(), 2u);
  ASSERT_EQ(b["ranks"].size(), 2u);
  size_t pairs = 0;
  for (size_t r = 0; r < 2; ++r) {
    const json &ra = a["ranks"][r], &rb = b["ranks"][r];
    EXPECT_EQ(rb["verdict"], ra["verdict"]);
    EXPECT_EQ(rb["verdict"], GetParam().second);
    ASSERT_EQ(rb["steps"].size(), ra["steps"].size());
    for (size_t s = 0; s < ra["steps"].size(); ++s) {
      EXPECT_EQ(rb["steps"][s]["verdict"], ra["steps"][s]["verdict"]) << "rank " << r << " step " << s;
      EXPECT_EQ(rb["steps"][s].value("cause", json()), ra["steps"][s].value("cause", json()))
          << "rank " << r << " step " << s;
      EXPECT_EQ(rb["steps"][s]["units"].size(), ra["steps"][s]["units"].size());
      pairs += rb["steps"][s]["units"].size();
    }
  }
  EXPECT_GT(pairs, 0u);
}

INSTANTIATE_TEST_SUITE_P(H100, NsysTrainer,
                         ::testing::Values(std::pair{"shardscope_train_pre", "effective"},
                                           std::pair{"shardscope_train_none", "not effective"}),
                         [](const auto& i) { return std::string(i.param.first); });

// An export of a trainer whose ranges carry no payload (an older build, or a capture with payloads off):
// the ranges still read as the trainer's, units stay unknown and the load says why.
TEST(NsysTrainer, WithoutPayloadsSaysUnitsAreUnknown) {
  test::TempDir d;
  const fs::path db = d.path() / "old.sqlite";
  {
    TrainerExport w(db, false);
    w.add_rank(test::read_gz_json(fs::path(SHARDSCOPE_DATA_DIR) / "h100_nccl2" / "shardscope_train_pre" /
                                  "trace.rank0.json.gz"));
  }
  plugins::LoadResult nsys = plugins::load({db});
  ASSERT_EQ(nsys.trace.ranks.size(), 1u);
  const model::Rank& r = nsys.trace.ranks[0];
  std::string warnings;
  for (const std::string& w : r.warnings) warnings += w + "\n";
  EXPECT_NE(warnings.find("int64Value"), std::string::npos) << warnings;
  for (const auto& [k, v] : summary(r)) EXPECT_EQ(k.find("unit"), std::string::npos) << k;
}

}  // namespace
