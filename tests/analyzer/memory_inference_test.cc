// The ZeRO model's inputs read off real PyTorch traces that carry no run_config (metrics/memory_inference.h),
// against what the programs that made them knew: tests/data/torch211_fsdp_memory/*/rank*_truth.json (FSDP2
// full shard fp32, FSDP2 reshard_after_forward=False with bf16 parameters, DDP fp32; 2 NCCL ranks on an H200),
// PyTorch FSDP1 on an H100 (FULL_SHARD fp32, 2 ranks, 4 blocks of the `small` shape), and a Gloo DDP trace
// from the legacy profiler where the sizes cannot be read. Flags given to `report` override each input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/metrics/memory_model.h"
#include "plugins/load/load.h"
#include "tests/support/run.h"

using namespace shardscope;
using nlohmann::json;
namespace fs = std::filesystem;
using metrics::InferNa;
using metrics::InputBasis;
using metrics::InputOrigin;

namespace {

const fs::path kData = fs::path(SHARDSCOPE_DATA_DIR);

json truth(const std::string& mode, int rank) {
  std::ifstream f(kData / "torch211_fsdp_memory" / mode / ("rank" + std::to_string(rank) + "_truth.json"));
  return json::parse(f);
}

std::vector<metrics::RankMemory> memory_of(const std::vector<fs::path>& files) {
  plugins::LoadResult loaded = plugins::load(files);
  std::vector<metrics::RankMemory> out;
  for (const model::Rank& r : loaded.trace.ranks) out.push_back(metrics::compare_memory(r));
  return out;
}

std::vector<metrics::RankMemory> torch211(const std::string& mode) {
  const fs::path d = kData / "torch211_fsdp_memory" / mode;
  return memory_of({d / "rank0.json.gz", d / "rank1.json.gz"});
}

// make_trace.py's model as its parameter shapes, dim 0 first: what FSDP2 pads (each parameter's dim 0 to a
// multiple of the world size, so every rank holds an equal shard).
struct Shape {
  int64_t rows, cols;
};
std::vector<Shape> decoder_shapes(int64_t layers, int64_t d, int64_t vocab) {
  std::vector<Shape> s = {{vocab, d}};  // emb
  for (int64_t i = 0; i < layers; ++i)
    for (Shape p : {Shape{d, 1}, Shape{d, 1}, Shape{d, 1}, Shape{d, 1},  // n1, n2 weight and bias
                    Shape{3 * d, d}, Shape{d, d}, Shape{4 * d, d}, Shape{d, 4 * d}})
      s.push_back(p);
  for (Shape p : {Shape{d, 1}, Shape{d, 1}, Shape{vocab, d}}) s.push_back(p);  // norm, head
  return s;
}

int64_t fsdp2_padding(const std::vector<Shape>& shapes, int64_t world) {
  int64_t pad = 0;
  for (const Shape& s : shapes) pad += ((s.rows + world - 1) / world * world - s.rows) * s.cols;
  return pad;
}

double predicted(const metrics::RankMemory& m, const std::string& category) {
  for (const metrics::MemoryRow& r : m.rows)
    if (r.category == category) return r.predicted.value_or(-1);
  return -2;
}

TEST(MemoryInference, ShapesOfTheCapturedModelAddUpToItsTruth) {
  // The shapes above are the model's: their sum is the parameter count the program printed.
  int64_t n = 0;
  for (const Shape& s : decoder_shapes(4, 512, 8192)) n += s.rows * s.cols;
  EXPECT_EQ(n, truth("fsdp2", 0)["parameters"].get<int64_t>());
  EXPECT_EQ(n, 20'980'736);
}

// Each capture: the world size, strategy, dtype and parameter count the program knew, per rank.
void expect_truth(const std::string& mode, const char* strategy, InputBasis strategy_basis, InputBasis params_basis,
                  int64_t padding) {
  const std::vector<metrics::RankMemory> ranks = torch211(mode);
  ASSERT_EQ(ranks.size(), 2u);
  for (const metrics::RankMemory& m : ranks) {
    SCOPED_TRACE(mode + " rank " + std::to_string(m.rank));
    const json t = truth(mode, m.rank);
    const metrics::MemoryInputs& in = m.inputs;
    EXPECT_EQ(in.world_size.origin, InputOrigin::Inferred);
    EXPECT_EQ(in.world_size.basis, InputBasis::TraceHeader);
    EXPECT_EQ(in.world_size.value, t["world_size"].get<double>());
    EXPECT_EQ(in.sharding.origin, InputOrigin::Inferred);
    EXPECT_EQ(in.sharding.text, t["sharding"].get<std::string>());
    EXPECT_EQ(in.sharding.text, strategy);
    EXPECT_EQ(in.sharding.basis, strategy_basis);
    EXPECT_EQ(in.dtype.text, t["param_dtype"].get<std::string>());
    EXPECT_EQ(in.dtype.basis, InputBasis::CollectiveDtype);
    EXPECT_EQ(in.params.origin, InputOrigin::Inferred);
    EXPECT_EQ(in.params.basis, params_basis);
    // Gathered (or reduced) elements = the parameters plus the padding worked out from the shapes.
    EXPECT_EQ(in.params.value, t["parameters"].get<double>() + double(padding));
    EXPECT_GE(in.params.step, 0);
    EXPECT_TRUE(in.params.at.valid());
    EXPECT_EQ(in.optimizer.text, t["optimizer"].get<std::string>());
    ASSERT_TRUE(m.config) << int(m.states_na.code) << " " << m.states_na.text;
    EXPECT_EQ(m.config->world, t["world_size"].get<int>());
  }
}

TEST(MemoryInference, Fsdp2FullShardFp32) {
  // FSDP2 pads each parameter's dim 0 to a multiple of 2: every dim 0 here is even, so no padding.
  const int64_t padding = fsdp2_padding(decoder_shapes(4, 512, 8192), 2);
  EXPECT_EQ(padding, 0);
  expect_truth("fsdp2", "FULL_SHARD", InputBasis::GatheredTwice, InputBasis::GatherOutputs, padding);
  const metrics::RankMemory m = torch211("fsdp2").at(0);
  EXPECT_EQ(m.inputs.units, 5);                                  // 4 blocks and the root (embedding, final norm, head)
  EXPECT_EQ(m.inputs.largest_unit, 2.0 * 8192 * 512 + 2 * 512);  // the root: emb + head + norm
  EXPECT_EQ(m.inputs.sharding.events, 10);                       // 5 units in forward, 5 again in backward
  EXPECT_EQ(m.config->stage, 3);
  EXPECT_EQ(m.config->param_bytes, 4);
  // Stage 3, fp32, N = 2, Ψ = 20,980,736: the fp32 master shard 4Ψ/2, gradients 4Ψ/2, AdamW 8Ψ/2.
  EXPECT_DOUBLE_EQ(predicted(m, "sharded_params"), 41'961'472);
  EXPECT_DOUBLE_EQ(predicted(m, "gradients"), 41'961'472);
  EXPECT_DOUBLE_EQ(predicted(m, "optimizer_state"), 83'922'944);
  // Gathered at the peak: the largest unit (8,389,632 fp32 parameters) x 2 in flight.
  EXPECT_DOUBLE_EQ(predicted(m, "unsharded_params"), 2 * 4 * 8'389'632.0);
}

TEST(MemoryInference, Fsdp2ShardGradOpBf16) {
  expect_truth("fsdp2_sgo", "SHARD_GRAD_OP", InputBasis::GatheredOnce, InputBasis::GatherOutputs,
               fsdp2_padding(decoder_shapes(4, 512, 8192), 2));
  const metrics::RankMemory m = torch211("fsdp2_sgo").at(1);
  EXPECT_EQ(m.inputs.sharding.events, 5);  // each unit once, in forward
  EXPECT_EQ(m.config->stage, 2);
  EXPECT_EQ(m.config->param_bytes, 2);
  // Stage 2, bf16 parameters under FSDP's accounting, N = 2: the whole bf16 parameters 2Ψ, the fp32 master
  // shard 4Ψ/2, fp32 gradient shard 4Ψ/2, AdamW 8Ψ/2.
  EXPECT_DOUBLE_EQ(predicted(m, "unsharded_params"), 2 * 20'980'736.0);
  EXPECT_DOUBLE_EQ(predicted(m, "sharded_params"), 2 * 20'980'736.0);
  EXPECT_DOUBLE_EQ(predicted(m, "gradients"), 2 * 20'980'736.0);
  EXPECT_DOUBLE_EQ(predicted(m, "optimizer_state"), 4 * 20'980'736.0);
}

TEST(MemoryInference, DdpFromItsAllReduces) {
  // DDP's buckets all-reduce every gradient once a step, unpadded.
  expect_truth("ddp", "NO_SHARD", InputBasis::AllReduceOnly, InputBasis::AllReduceElements, 0);
  const metrics::RankMemory m = torch211("ddp").at(0);
  EXPECT_EQ(m.config->stage, 0);
  EXPECT_EQ(m.inputs.params.events, 3);  // three buckets in a steady step
}

TEST(MemoryInference, Fsdp1FullShardOnH100) {
  const fs::path d = kData / "h100_nccl2" / "pytorch_fsdp1_backward_pre";
  // The `small` shape, 4 blocks (vocab 32000, dim 768, ffn 2048, SwiGLU, RMSNorm weights): the root holds the
  // embedding, the output head and the final norm; a block attention's 4 d^2, the FFN's 3 d·ffn, 2 norms.
  const double root = 2.0 * 32000 * 768 + 768, block = 4.0 * 768 * 768 + 3.0 * 768 * 2048 + 2 * 768;
  const double params = root + 4 * block;
  // FSDP1 pads each unit's flat parameter to a multiple of the world size: at most N - 1 = 1 element a unit.
  const double max_padding = 5 * (2 - 1);
  for (const metrics::RankMemory& m : memory_of({d / "rank0.json.gz", d / "rank1.json.gz"})) {
    SCOPED_TRACE("rank " + std::to_string(m.rank));
    EXPECT_EQ(m.inputs.world_size.value, 2);
    EXPECT_EQ(m.inputs.sharding.text, "FULL_SHARD");
    EXPECT_EQ(m.inputs.dtype.text, "fp32");
    EXPECT_GE(m.inputs.params.value, params);
    EXPECT_LE(m.inputs.params.value, params + max_padding);
    // The root is gathered once in forward and kept through backward; the blocks are gathered again.
    EXPECT_EQ(m.inputs.root_unit, root);
    EXPECT_EQ(m.inputs.units, 5);
    ASSERT_TRUE(m.config);
    EXPECT_EQ(m.config->root_unit_params, root);
  }
}

TEST(MemoryInference, GlooLegacyTraceSaysWhatItCannotRead) {
  const fs::path d = kData / "torch113_ddp_gloo";
  for (const metrics::RankMemory& m : memory_of({d / "trace.rank0.json.gz", d / "trace.rank1.json.gz"})) {
    // All-reduces and no all-gather: DDP, whatever else is missing.
    EXPECT_EQ(m.inputs.sharding.text, "NO_SHARD");
    EXPECT_EQ(m.inputs.sharding.basis, InputBasis::AllReduceOnly);
    // The legacy profiler's JSON array has no distributedInfo, and Gloo's ops carry no group sizes.
    EXPECT_FALSE(m.inputs.world_size.known());
    EXPECT_EQ(m.inputs.world_size.na, InferNa::NoWorldSize);
    // Nor element counts or dtypes: no parameter count.
    EXPECT_EQ(m.inputs.params.na, InferNa::NoMessageSizes);
    EXPECT_EQ(m.inputs.dtype.na, InferNa::NoDtype);
    EXPECT_EQ(m.inputs.optimizer.text, "SGD");
    EXPECT_FALSE(m.config);
    EXPECT_EQ(m.states_na.code, sizing::MemoryNa::Code::NoInferredInput);
    EXPECT_EQ(m.states_na.text, "world_size");
    EXPECT_LT(predicted(m, "sharded_params"), 0);
  }
}

TEST(MemoryInference, FlagsOverrideWhatTheTraceShows) {
  metrics::RankMemory m = torch211("fsdp2_sgo").at(0);
  metrics::MemoryGiven g;
  g.params = 1e9;
  g.world_size = 4;
  metrics::give_memory_inputs(m, g);
  EXPECT_EQ(m.inputs.params.origin, InputOrigin::Given);
  EXPECT_EQ(m.inputs.world_size.origin, InputOrigin::Given);
  EXPECT_EQ(m.inputs.sharding.origin, InputOrigin::Inferred);  // not given: as the trace shows it
  ASSERT_TRUE(m.config);
  EXPECT_EQ(m.config->world, 4);
  // Stage 2 (inferred), bf16 (inferred), Ψ = 1e9, N = 4: whole bf16 parameters 2e9, master shard 4e9/4.
  EXPECT_DOUBLE_EQ(predicted(m, "unsharded_params"), 2e9);
  EXPECT_DOUBLE_EQ(predicted(m, "sharded_params"), 1e9);
  EXPECT_DOUBLE_EQ(predicted(m, "optimizer_state"), 2e9);

  metrics::MemoryGiven more;
  more.sharding = "full_shard";
  more.dtype = "fp32";
  more.optimizer = "SGD";
  metrics::give_memory_inputs(m, more);
  EXPECT_EQ(m.config->stage, 3);
  EXPECT_EQ(m.config->param_bytes, 4);
  // SGD's state is not what the model counts: no prediction, and the reason names it.
  EXPECT_LT(predicted(m, "optimizer_state"), 0);
  for (const metrics::MemoryRow& r : m.rows)
    if (r.category == "optimizer_state") {
      EXPECT_EQ(r.predicted_na.code, sizing::MemoryNa::Code::OptimizerNotModelled);
      EXPECT_EQ(r.predicted_na.text, "SGD");
    }
  // Stage 3, fp32: the master shard 4·1e9/4.
  EXPECT_DOUBLE_EQ(predicted(m, "sharded_params"), 1e9);
}

TEST(MemoryInference, FlagsCompleteWhatTheTraceLacks) {
  const fs::path d = kData / "torch113_ddp_gloo";
  metrics::RankMemory m = memory_of({d / "trace.rank0.json.gz", d / "trace.rank1.json.gz"}).at(0);
  metrics::MemoryGiven g;
  g.world_size = 2, g.params = 1000, g.dtype = "fp32", g.optimizer = "adamw";
  metrics::give_memory_inputs(m, g);
  ASSERT_TRUE(m.config);
  EXPECT_EQ(m.config->stage, 0);  // NO_SHARD, still as inferred
  // DDP fp32: the parameters are the master, 4Ψ; gradients 4Ψ; AdamW 8Ψ.
  EXPECT_DOUBLE_EQ(predicted(m, "sharded_params"), 4000);
  EXPECT_DOUBLE_EQ(predicted(m, "gradients"), 4000);
  EXPECT_DOUBLE_EQ(predicted(m, "optimizer_state"), 8000);
}

// HYBRID_SHARD shards over the all-gathers' group, not the world (no real hybrid capture here: the rule alone).
TEST(MemoryInference, HybridShardsOverTheGatherGroup) {
  metrics::MemoryInputs in;
  auto inferred = [](metrics::MemoryInput& i, double v, std::string t) {
    i.origin = InputOrigin::Inferred, i.value = v, i.text = std::move(t);
  };
  inferred(in.world_size, 64, "");
  inferred(in.sharding, 3, "HYBRID_SHARD");
  inferred(in.params, 8e9, "");
  inferred(in.dtype, 0, "bf16");
  in.group_size = 8;
  sizing::MemoryNa why;
  auto c = metrics::config_from_inputs(in, why);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->world, 8);
  EXPECT_EQ(c->stage, 3);
  EXPECT_EQ(c->param_bytes, 2);
  // Given as FULL_SHARD, it shards over all 64.
  metrics::MemoryGiven g;
  g.sharding = "FULL_SHARD";
  metrics::apply_given(in, g);
  c = metrics::config_from_inputs(in, why);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->world, 64);
  // An unknown input names itself.
  in.dtype = {};
  EXPECT_FALSE(metrics::config_from_inputs(in, why));
  EXPECT_EQ(why.code, sizing::MemoryNa::Code::NoInferredInput);
  EXPECT_EQ(why.text, "dtype");
}

// The flags reach the report in every format: its JSON marks each input given or inferred.
TEST(MemoryInference, ReportFlagsInJsonTextAndHtml) {
  const std::string dir = (kData / "torch211_fsdp_memory" / "fsdp2").string();
  auto j = test::run({SHARDSCOPE_BIN, "report", "-q", dir, "--format", "json", "--world-size", "8", "--params", "7e9",
                      "--ranks", "all"});
  ASSERT_EQ(j.rc, 0) << j.err;
  const json r = json::parse(j.out);
  const json& in = r["ranks"][0]["memory"]["model_inputs"];
  EXPECT_EQ(in["world_size"]["origin"], "given");
  EXPECT_EQ(in["world_size"]["value"], 8);
  EXPECT_EQ(in["params"]["value"], 7e9);
  EXPECT_EQ(in["sharding"]["origin"], "inferred");
  EXPECT_EQ(in["sharding"]["value"], "FULL_SHARD");
  EXPECT_NE(in["sharding"]["from"].get<std::string>().find("backward"), std::string::npos);
  EXPECT_EQ(in["dtype"]["value"], "fp32");
  // Stage 3, fp32, Ψ = 7e9, N = 8: the master shard 4·7e9/8.
  for (const json& row : r["ranks"][0]["memory"]["rows"])
    if (row["category"] == "sharded_params") EXPECT_EQ(row["predicted_bytes"], 3.5e9);
  auto t = test::run({SHARDSCOPE_BIN, "report", "-q", dir, "--world-size", "8"});
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("model inputs: world size 8 (given); sharding FULL_SHARD (inferred from"), std::string::npos);
  auto h = test::run({SHARDSCOPE_BIN, "report", "-q", dir, "--format", "html"});
  ASSERT_EQ(h.rc, 0) << h.err;
  EXPECT_NE(h.out.find("Model inputs: world size 2 (inferred from"), std::string::npos);
  auto bad = test::run({SHARDSCOPE_BIN, "report", "-q", dir, "--sharding", "zero9"});
  EXPECT_EQ(bad.rc, 2);  // CLI11's usage error... or ours: not 0, and it names the option
  EXPECT_NE(bad.err.find("--sharding"), std::string::npos) << bad.err;
  auto odd = test::run({SHARDSCOPE_BIN, "report", "-q", dir, "--optimizer", "a b;<x>"});
  EXPECT_NE(odd.rc, 0);
  EXPECT_NE(odd.err.find("--optimizer"), std::string::npos) << odd.err;
}

}  // namespace
