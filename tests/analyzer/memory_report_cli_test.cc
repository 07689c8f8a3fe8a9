// `shardscope report` shows the predicted activations (from run_config's model shape) beside the measured
// ones in every format, and says how it predicted them; `shardscope memory` predicts through the same model
// and agrees with the report on the same configuration.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/analyzer/trainer_trace.h"
#include "tests/support/run.h"
#include "tests/support/temp_dir.h"

using nlohmann::json;
using shardscope::test::run;

namespace {

TEST(MemoryReportCli, ActivationsPredictedBesideMeasured) {
  shardscope::test::TempDir d;
  shardscope::test::TrainerTraceOptions o;
  // s = 64, b = 2, h = 128, a = 4, L = 4, bf16: 4 × 64·2·128·(34 + 5·4·64/128) = 2,883,584 bytes.
  o.run_config_extra = {{"model", {{"layers", 4}, {"dim", 128}, {"heads", 4}, {"seq_len", 64}}}, {"batch_size", 2}};
  o.activations_bytes = 2'500'000;
  auto path = d.path() / "trace.rank0.json";
  shardscope::test::write_trainer_trace(path, o);

  auto j = run({SHARDSCOPE_BIN, "report", path.string(), "--format", "json"});
  ASSERT_EQ(j.rc, 0) << j.err;
  const json report = json::parse(j.out);
  const json& mem = report["ranks"][0]["memory"];
  bool found = false;
  for (const json& row : mem["rows"])
    if (row["category"] == "activations") {
      found = true;
      EXPECT_EQ(row["measured_bytes"], 2'500'000.0);
      EXPECT_EQ(row["predicted_bytes"], 2'883'584.0);
    }
  EXPECT_TRUE(found);
  EXPECT_NE(mem["activations_model"].get<std::string>().find("Korthikanti"), std::string::npos);

  auto text = run({SHARDSCOPE_BIN, "report", path.string()});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_TRUE(std::regex_search(text.out, std::regex("activations +2\\.500 +2\\.884")))
      << text.out;  // measured, predicted MB
  EXPECT_NE(text.out.find("activations: predicted by Korthikanti et al. 2022 without recomputation"), std::string::npos)
      << text.out;

  auto html = run({SHARDSCOPE_BIN, "report", path.string(), "--format", "html"});
  ASSERT_EQ(html.rc, 0) << html.err;
  EXPECT_NE(html.out.find("predicted 2.884 MB"), std::string::npos);
  EXPECT_NE(html.out.find("Activations: predicted by Korthikanti"), std::string::npos);
}

json predicted_rows(const json& report_rank) {
  json out = json::object();
  for (const json& row : report_rank["memory"]["rows"])
    out[row["category"].get<std::string>()] = row["predicted_bytes"];
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

TEST(MemoryCli, AgreesWithTheReportOnTheSameConfiguration) {
  for (const std::string prefetch : {"pre", "none"}) {
    for (const std::string dtype : {"bf16", "fp32"}) {
      SCOPED_TRACE(prefetch + " " + dtype);
      shardscope::test::TempDir d;
      shardscope::test::TrainerTraceOptions o;  // FULL_SHARD over 2 ranks, 4 units of 1e6 parameters, unit 0 the root
      o.prefetch = prefetch;
      o.memory_counters = dtype == "bf16";  // the helper's counters are the trainer's under bf16
      o.run_config_extra = {{"param_dtype", dtype}};
      auto path = d.path() / "trace.rank0.json";
      shardscope::test::write_trainer_trace(path, o);
      auto rep = run({SHARDSCOPE_BIN, "report", path.string(), "--format", "json"});
      ASSERT_EQ(rep.rc, 0) << rep.err;
      const json rank = json::parse(rep.out)["ranks"][0];
      const json predicted = predicted_rows(rank);
      // The report names the `shardscope memory` command that prints its prediction.
      const std::string command = rank["memory"]["memory_command"];
      EXPECT_EQ(command, "shardscope memory --params 4000000 --world 2 --stage 3 --dtype " + dtype +
                             " --precision fsdp --largest-unit 1000000 --root-unit 1000000" +
                             (prefetch == "none" ? " --backward-prefetch none" : ""));
      EXPECT_NE(rank["memory"]["states_model"].get<std::string>().find(command), std::string::npos);
      std::vector<std::string> argv = words(command);
      argv[0] = SHARDSCOPE_BIN;
      argv.insert(argv.end(), {"--format", "json"});
      auto mem = run(argv);
      ASSERT_EQ(mem.rc, 0) << mem.err;
      const json stage = json::parse(mem.out)["stages"][0];
      EXPECT_DOUBLE_EQ(stage["sharded_params_bytes"].get<double>(), predicted["sharded_params"].get<double>());
      EXPECT_DOUBLE_EQ(stage["unsharded_params_bytes"].get<double>(), predicted["unsharded_params"].get<double>());
      EXPECT_DOUBLE_EQ(stage["gradients_bytes"].get<double>(), predicted["gradients"].get<double>());
      EXPECT_DOUBLE_EQ(stage["optimizer_state_bytes"].get<double>(), predicted["optimizer_state"].get<double>());
      // Stage 3 gathers the root and the running unit, and with prefetch the next one too: 2 or 3 units.
      const double pb = dtype == "bf16" ? 2 : 4;
      EXPECT_DOUBLE_EQ(predicted["unsharded_params"].get<double>(), pb * 1e6 * (prefetch == "pre" ? 3 : 2));
      if (o.memory_counters) {
        EXPECT_EQ(rank["memory"]["departs_most"].get<std::string>().rfind("none", 0), 0u) << rank["memory"];
      }
    }
  }
}

TEST(MemoryCli, MasterShardAtStagesOneAndTwoAndTwoGatheredUnitsAtStageThree) {
  // fp32 at stage 2, Ψ = 1e9 over 4 ranks: the fp32 master shard (1 GB) beside the whole fp32 parameters
  // (4 GB), gradient shard 1 GB, moments 2 GB.
  auto s2 = run({SHARDSCOPE_BIN, "memory", "--params", "1e9", "--world", "4", "--stage", "2", "--dtype", "fp32",
                 "--format", "json"});
  ASSERT_EQ(s2.rc, 0) << s2.err;
  const json st2 = json::parse(s2.out)["stages"][0];
  EXPECT_DOUBLE_EQ(st2["master_bytes"].get<double>(), 1e9);
  EXPECT_DOUBLE_EQ(st2["params_bytes"].get<double>(), 4e9);
  EXPECT_DOUBLE_EQ(st2["model_states_bytes"].get<double>(), 8e9);
  auto s1 = run({SHARDSCOPE_BIN, "memory", "--params", "1e9", "--world", "4", "--stage", "1", "--dtype", "fp32",
                 "--format", "json"});
  EXPECT_DOUBLE_EQ(json::parse(s1.out)["stages"][0]["master_bytes"].get<double>(), 1e9);
  // Stage 3 in bf16: the largest unit twice (running + prefetched) and the root, in bf16.
  auto s3 = run({SHARDSCOPE_BIN, "memory", "--params", "1e9", "--world", "4", "--stage", "3", "--largest-unit", "1e8",
                 "--root-unit", "5e7", "--format", "json"});
  ASSERT_EQ(s3.rc, 0) << s3.err;
  EXPECT_DOUBLE_EQ(json::parse(s3.out)["stages"][0]["gathered_bytes"].get<double>(), 2 * (2 * 1e8 + 5e7));
  auto none = run({SHARDSCOPE_BIN, "memory", "--params", "1e9", "--world", "4", "--stage", "3", "--largest-unit", "1e8",
                   "--root-unit", "5e7", "--backward-prefetch", "none", "--format", "json"});
  EXPECT_DOUBLE_EQ(json::parse(none.out)["stages"][0]["gathered_bytes"].get<double>(), 2 * (1e8 + 5e7));
  auto text = run({SHARDSCOPE_BIN, "memory", "--params", "1e9", "--world", "4"});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("fp32 master GB"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("the largest unit × 2 (the running one and the prefetched one)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("n/a: no unit sizes"), std::string::npos)
      << text.out;  // the stage-3 "+ gathered" cell says why
  // A preset knows its units; a small one is shown in MB.
  auto tiny = run({SHARDSCOPE_BIN, "memory", "--preset", "tiny", "--world", "2", "--stage", "3"});
  ASSERT_EQ(tiny.rc, 0) << tiny.err;
  EXPECT_NE(tiny.out.find("+ gathered MB"), std::string::npos) << tiny.out;
  EXPECT_EQ(tiny.out.find("n/a"), std::string::npos) << tiny.out;
}

TEST(MemoryCli, HybridShardShardsWithinANode) {
  auto h = run({SHARDSCOPE_BIN, "memory", "--params", "8e9", "--world", "64", "--hybrid-shard", "8", "--stage", "3",
                "--format", "json"});
  ASSERT_EQ(h.rc, 0) << h.err;
  const json j = json::parse(h.out);
  EXPECT_EQ(j["sharding_group"], 8);
  EXPECT_EQ(j["stages"][0]["strategy"], "HYBRID_SHARD");
  EXPECT_DOUBLE_EQ(j["model_states_bytes"].get<double>(),
                   16 * 8e9 / 8);  // the ZeRO paper's 16 bytes a parameter, over the 8 of a node
  auto text = run({SHARDSCOPE_BIN, "memory", "--params", "8e9", "--world", "64", "--hybrid-shard", "8"});
  EXPECT_NE(text.out.find("HYBRID_SHARD: sharded within nodes of 8, replicated across 8 nodes"), std::string::npos)
      << text.out;
  auto bad = run({SHARDSCOPE_BIN, "memory", "--params", "8e9", "--world", "64", "--hybrid-shard", "6"});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--hybrid-shard 6 does not divide --world 64"), std::string::npos) << bad.err;
  // The report reads the same layout from a hybrid_shard run's run_config.
  shardscope::test::TempDir d;
  shardscope::test::TrainerTraceOptions o;
  o.run_config_extra = {{"sharding", "hybrid_shard"}, {"ranks_per_node", 1}};
  o.memory_counters = false;
  shardscope::test::write_trainer_trace(d.path() / "t.json", o);
  auto rep = run({SHARDSCOPE_BIN, "report", (d.path() / "t.json").string(), "--format", "json"});
  ASSERT_EQ(rep.rc, 0) << rep.err;
  EXPECT_NE(json::parse(rep.out)["ranks"][0]["memory"]["memory_command"].get<std::string>().find("--world 1 --stage 3"),
            std::string::npos)
      << rep.out;
}

TEST(MemoryCli, SaysFirstThatSeventyBOnEightRanksDoesNotFitAnH100) {
  // Ψ = 70e9 in bf16, the ZeRO paper's 16 bytes a parameter: HYBRID_SHARD within one node of 8 holds
  // 16 × 70e9 / 8 = 140e9 bytes a GPU, 60e9 over an H100's 80e9 (the default device).
  auto r = run({SHARDSCOPE_BIN, "memory", "--params", "70e9", "--world", "8", "--hybrid-shard", "8", "--stage", "3"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string first = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(first.rfind("Does not fit an H100 (80.0 GB) with HYBRID_SHARD (140.0 GB a GPU, 60.0 GB over)", 0), 0u)
      << first;
  EXPECT_NE(first.find("activations not counted"), std::string::npos) << first;
  // Every strategy side by side: DDP holds 1120e9 (1040e9 over), ZeRO-1 4+2+2 + 8/8 = 385e9 (305e9 over).
  auto all =
      run({SHARDSCOPE_BIN, "memory", "--params", "70e9", "--world", "8", "--hybrid-shard", "8", "--format", "json"});
  ASSERT_EQ(all.rc, 0) << all.err;
  const json j = json::parse(all.out);
  EXPECT_EQ(j["device"]["name"], "H100");
  EXPECT_DOUBLE_EQ(j["device"]["bytes"].get<double>(), 80e9);
  EXPECT_TRUE(j["activations_bytes"].is_null());
  const double totals[] = {1120e9, 385e9, 262.5e9, 140e9};
  for (int s = 0; s < 4; ++s) {
    EXPECT_DOUBLE_EQ(j["stages"][s]["total_bytes"].get<double>(), totals[s]) << s;
    EXPECT_DOUBLE_EQ(j["stages"][s]["headroom_bytes"].get<double>(), 80e9 - totals[s]) << s;
    EXPECT_FALSE(j["stages"][s]["fits"].get<bool>()) << s;
  }
  // The same on an MI300X's 192e9: only HYBRID_SHARD fits, with 52e9 to spare.
  auto mi =
      run({SHARDSCOPE_BIN, "memory", "--params", "70e9", "--world", "8", "--hybrid-shard", "8", "--device", "MI300X"});
  EXPECT_NE(mi.out.find("Fits an MI300X (192.0 GB) with HYBRID_SHARD (140.0 GB a GPU, 52.0 GB headroom); does not "
                        "fit with DDP / NO_SHARD (1120.0 GB a GPU, 928.0 GB over)"),
            std::string::npos)
      << mi.out;
}

TEST(MemoryCli, ActivationsAddToTheTotalAndTheVerdict) {
  // Ψ = 1e9 bf16 over 4 ranks, stage 3: model states 16e9 / 4 = 4e9; gathered 2 × (2 × 1e8 + 5e7) = 5e8.
  // Activations, s = 2048, b = 1, h = 2048, a = 16, L = 16: s·b·h = 4,194,304; a·s/h = 16;
  // 4,194,304 × (34 + 5 × 16) = 478,150,656 a layer, × 16 = 7,650,410,496 bytes.
  // Total 12,150,410,496: 67,849,589,504 headroom on an H100 (80e9).
  const std::vector<std::string> base = {SHARDSCOPE_BIN, "memory", "--params",       "1e9", "--world",     "4",
                                         "--stage",      "3",      "--largest-unit", "1e8", "--root-unit", "5e7",
                                         "--seq-len",    "2048",   "--micro-batch",  "1",   "--hidden",    "2048",
                                         "--layers",     "16",     "--heads",        "16"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> a = base;
    a.insert(a.end(), more.begin(), more.end());
    return run(a);
  };
  auto r = with({"--format", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["activations_bytes"].get<double>(), 7'650'410'496.0);
  EXPECT_DOUBLE_EQ(j["stages"][0]["total_bytes"].get<double>(), 12'150'410'496.0);
  EXPECT_DOUBLE_EQ(j["stages"][0]["headroom_bytes"].get<double>(), 67'849'589'504.0);
  EXPECT_TRUE(j["stages"][0]["fits"].get<bool>());
  EXPECT_TRUE(j["activations_inputs"]["attention_scores_kept"].get<bool>());
  auto text = with({});
  EXPECT_EQ(text.out.rfind("Fits an H100 (80.0 GB) with FULL_SHARD (12.2 GB a GPU, 67.8 GB headroom)\n", 0), 0u)
      << text.out;
  // Fused attention keeps no scores: 4,194,304 × 34 × 16 = 2,281,701,376.
  auto fused = with({"--attention", "fused", "--format", "json"});
  EXPECT_DOUBLE_EQ(json::parse(fused.out)["activations_bytes"].get<double>(), 2'281'701'376.0);
  // Full checkpointing: 2·s·b·h a layer (8,388,608 × 16 = 134,217,728) + one layer recomputed (478,150,656).
  auto ckpt = with({"--checkpointing", "--format", "json"});
  EXPECT_DOUBLE_EQ(json::parse(ckpt.out)["activations_bytes"].get<double>(), 612'368'384.0);
  // A device given in bytes smaller than the total: 12e9 bytes is 150,410,496 short.
  auto small = with({"--device", "12000000000"});
  EXPECT_EQ(small.out.rfind("Does not fit a device of 12.0 GB with FULL_SHARD (12.2 GB a GPU, 150.410 MB over)", 0), 0u)
      << small.out;
  // The preset gives the shape; fp32 doubles the bytes: tiny, s = 64, h = 128, a = 4, L = 4, b = 1:
  // 64·128 × (34 + 5·4·64/128) = 8192 × 44 = 360,448 a layer × 4 layers × 2 (4-byte) = 2,883,584.
  auto tiny =
      run({SHARDSCOPE_BIN, "memory", "--preset", "tiny", "--world", "2", "--dtype", "fp32", "--format", "json"});
  ASSERT_EQ(tiny.rc, 0) << tiny.err;
  EXPECT_DOUBLE_EQ(json::parse(tiny.out)["activations_bytes"].get<double>(), 2'883'584.0);
}

TEST(MemoryCli, BadDeviceAndPartialShapesAreOneLineAndExitTwo) {
  for (const char* bad : {"H300", "80GB", "-5", "0", "1.5", "nan", "1e400", ""}) {
    auto r = run({SHARDSCOPE_BIN, "memory", "--params", "1e9", "--world", "4", "--device", bad});
    EXPECT_EQ(r.rc, 2) << bad;
    EXPECT_EQ(r.out, "") << bad;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--device"), std::string::npos) << r.err;
  }
  auto h200 = run({SHARDSCOPE_BIN, "memory", "--params", "1e9", "--world", "4", "--device", "h200", "--stage", "0"});
  EXPECT_EQ(h200.rc, 0) << h200.err;
  EXPECT_EQ(h200.out.rfind("Fits an H200 (141.0 GB)", 0), 0u) << h200.out;
  auto partial = run({SHARDSCOPE_BIN, "memory", "--params", "1e9", "--world", "4", "--seq-len", "128"});
  EXPECT_EQ(partial.rc, 2);
  EXPECT_NE(partial.err.find("the activations need --hidden, --layers, --heads too"), std::string::npos) << partial.err;
}

// A PyTorch profiler trace with [memory] events (the H200 FSDP2 capture, tests/data/torch211_fsdp_memory):
// the report answers first with the peak and its step, then what was alive at it, in every format. The
// numbers are tests/data/torch211_fsdp_memory/by_hand.py's (and the peaks the program's own truth file's).
TEST(MemoryReportCli, MeasuredFromPyTorchsAllocatorEvents) {
  const std::string file = std::string(SHARDSCOPE_DATA_DIR) + "/torch211_fsdp_memory/fsdp2/rank0.json.gz";
  auto t = run({SHARDSCOPE_BIN, "report", file});
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("memory measured (the GPU allocator's events, device 0): peak 675.766 MB allocated in step 1 "
                       "(reached again in steps 2, 3, 4); at most 864.027 MB reserved"),
            std::string::npos)
      << t.out;
  EXPECT_TRUE(std::regex_search(t.out, std::regex(R"(optimizer state \(first Optimizer.step\) +86\.020 +72)")))
      << t.out;
  EXPECT_TRUE(std::regex_search(t.out, std::regex(R"(activations \(forward, freed in backward\) +344\.343 +58)")))
      << t.out;
  EXPECT_TRUE(std::regex_search(t.out, std::regex(R"(allocated before the trace began +44\.076)"))) << t.out;
  EXPECT_TRUE(std::regex_search(t.out, std::regex(R"(\n +total +675\.766)"))) << t.out;
  EXPECT_TRUE(std::regex_search(t.out, std::regex(R"(\n +1 +675\.766 +864\.027)"))) << t.out;  // the peak's step
  EXPECT_EQ(t.out.find("profile_memory"), std::string::npos) << "the trace has the events";
  // The run summary says it too, first thing.
  EXPECT_NE(
      t.out.find("\n  memory measured (the GPU allocator's events): peak 675.766 MB allocated on rank 0, in step 1\n"),
      std::string::npos)
      << t.out;

  auto j = run({SHARDSCOPE_BIN, "report", file, "--format", "json"});
  ASSERT_EQ(j.rc, 0) << j.err;
  const json report = json::parse(j.out);
  EXPECT_EQ(report["summary"]["memory"]["measured_peak"]["allocated_bytes"], 675765760);
  EXPECT_EQ(report["summary"]["memory"]["measured_peak"]["step"], 1);
  const json m = report["ranks"][0]["memory"]["measured"];
  EXPECT_EQ(m["allocator_events"], 3263);
  EXPECT_EQ(m["peak_allocated_bytes"], 675765760);
  EXPECT_EQ(m["peak_reserved_bytes"], 864026624);
  EXPECT_EQ(m["peak_step"], 1);
  EXPECT_EQ(m["peak_again_in_steps"], json({2, 3, 4}));
  EXPECT_EQ(m["before_trace_bytes"], 44075520);
  ASSERT_EQ(m["alive_at_peak"].size(), 5u);
  EXPECT_EQ(m["alive_at_peak"][2]["made"], "optimizer_state");
  EXPECT_EQ(m["alive_at_peak"][2]["bytes"], 86020096);
  EXPECT_EQ(m["alive_at_peak"][3]["made"], "activations");
  EXPECT_EQ(m["alive_at_peak"][3]["bytes"], 344343040);
  EXPECT_TRUE(m["alive_at_peak"][3]["predicted_bytes"].is_null());  // no configuration: no prediction beside it
  ASSERT_EQ(m["steps"].size(), 5u);
  EXPECT_EQ(m["steps"][0]["peak_allocated_bytes"], 556191232);

  auto h = run({SHARDSCOPE_BIN, "report", file, "--format", "html"});
  ASSERT_EQ(h.rc, 0) << h.err;
  EXPECT_NE(h.out.find("peak 675.766 MB allocated in step 1"), std::string::npos);
  EXPECT_NE(h.out.find("344.343"), std::string::npos);
}

// A PyTorch profiler trace recorded without profile_memory says in one line how to get the events.
TEST(MemoryReportCli, WithoutMemoryEventsSaysHowToRecordThem) {
  const std::string file = std::string(SHARDSCOPE_DATA_DIR) + "/hta_trace_filter/sampled_rank-0.json.gz";
  auto t = run({SHARDSCOPE_BIN, "report", file});
  ASSERT_EQ(t.rc, 0) << t.err;
  const std::string line =
      "  memory: no GPU memory events in the trace; record them with torch.profiler.profile(profile_memory=True)\n";
  ASSERT_NE(t.out.find(line), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("profile_memory", t.out.find(line) + line.size()), std::string::npos) << "said once";
  EXPECT_EQ(t.out.find("memory measured"), std::string::npos);
}

}  // namespace
