// SPEC's activation prediction (Korthikanti et al. 2022) from a trace's run_config, against numbers worked
// out by hand, and beside the measured activations in the memory comparison.
#include <gtest/gtest.h>

#include "analyzer/metrics/memory_model.h"
#include "plugins/load/load.h"
#include "sizing/activations.h"
#include "tests/analyzer/trainer_trace.h"
#include "tests/support/temp_dir.h"

using namespace shardscope;
using nlohmann::json;

namespace {

// s = 64, b = 2, h = 128, a = 4, L = 4: s·b·h = 16384; 34 + 5·a·s/h = 34 + 5·4·64/128 = 44;
// one layer at 2 bytes = 16384 · 44 = 720,896 bytes.
json model_config(bool checkpointing, const char* dtype) {
  return {{"model", {{"layers", 4}, {"dim", 128}, {"heads", 4}, {"seq_len", 64}}},
          {"batch_size", 2},
          {"activation_checkpointing", checkpointing},
          {"param_dtype", dtype}};
}

metrics::RankMemory memory_of(const json& extra) {
  test::TempDir dir;
  test::TrainerTraceOptions o;
  o.run_config_extra = extra;
  auto path = dir.path() / "trace.rank0.json";
  test::write_trainer_trace(path, o);
  return metrics::compare_memory(plugins::load({path}).trace.ranks.at(0));
}

std::optional<double> predicted(const metrics::RankMemory& m, const std::string& category) {
  for (const metrics::MemoryRow& r : m.rows)
    if (r.category == category) return r.predicted;
  return std::nullopt;
}

TEST(Activations, WithoutRecomputationEveryLayerKeepsItsActivations) {
  sizing::MemoryNa why;
  auto c = sizing::activation_config_from_run(trace::run_shape_from_json(model_config(false, "bf16")), why);
  ASSERT_TRUE(c) << why.text;
  EXPECT_DOUBLE_EQ(sizing::layer_activation_bytes_16bit(*c), 720'896);
  sizing::ActivationPrediction p = sizing::predict_activations(*c);
  EXPECT_DOUBLE_EQ(p.bytes, 4 * 720'896.0);  // 2,883,584
  EXPECT_FALSE(p.inputs.checkpointing);
  EXPECT_DOUBLE_EQ(p.scale, 1);
}

TEST(Activations, Fp32ActivationsTakeTwiceTheBytes) {
  sizing::MemoryNa why;
  auto c = sizing::activation_config_from_run(trace::run_shape_from_json(model_config(false, "fp32")), why);
  ASSERT_TRUE(c) << why.text;
  sizing::ActivationPrediction p = sizing::predict_activations(*c);
  EXPECT_DOUBLE_EQ(p.bytes, 2 * 4 * 720'896.0);  // 5,767,168
  EXPECT_DOUBLE_EQ(p.scale, 2);                  // the report words it (tests/golden/trainer_cpu_2ranks)
}

TEST(Activations, FullCheckpointingKeepsLayerInputsPlusOneLayer) {
  sizing::MemoryNa why;
  auto c = sizing::activation_config_from_run(trace::run_shape_from_json(model_config(true, "bf16")), why);
  ASSERT_TRUE(c) << why.text;
  // 2·s·b·h per layer × 4 layers = 131,072, plus one layer's 720,896.
  EXPECT_DOUBLE_EQ(sizing::predict_activations(*c).bytes, 851'968);
}

// run_config.model.ffn_dim (the trainer writes it) picks the trainer's own block: S = s·b·h = 16,384,
// F = s·b·ffn = 64·2·344 = 44,032, A = a·s²·b = 4·64²·2 = 32,768 elements.
TEST(Activations, TheTrainersBlockWhereRunConfigGivesTheFfnWidth) {
  sizing::MemoryNa why;
  json rc = model_config(false, "bf16");
  rc["model"]["ffn_dim"] = 344;
  auto c = sizing::activation_config_from_run(trace::run_shape_from_json(rc), why);
  ASSERT_TRUE(c) << why.text;
  EXPECT_DOUBLE_EQ(c->ffn_dim, 344);
  // bf16, e = 2: 2·(10·16,384 + 4·44,032) = 679,936; 4·A = 131,072; RMSNorm's fp32 inputs 8·S = 131,072;
  // the scores' bf16 cast 2·A = 65,536: 1,007,616 a layer, × 4 = 4,030,464.
  EXPECT_DOUBLE_EQ(sizing::trainer_block_layer_bytes(*c), 1'007'616);
  EXPECT_DOUBLE_EQ(sizing::predict_activations(*c).bytes, 4'030'464);
  // fp32, e = 4: 4·339,968 + 4·32,768 = 1,490,944 a layer, × 4 = 5,963,776 (golden trainer_cpu_2ranks: 5.964 MB).
  rc["param_dtype"] = "fp32";
  c = sizing::activation_config_from_run(trace::run_shape_from_json(rc), why);
  EXPECT_DOUBLE_EQ(sizing::predict_activations(*c).bytes, 5'963'776);
  // Checkpointing in bf16: each layer's input 2·S × 4 = 131,072, and one layer recomputed 1,007,616.
  rc["param_dtype"] = "bf16";
  rc["activation_checkpointing"] = true;
  c = sizing::activation_config_from_run(trace::run_shape_from_json(rc), why);
  EXPECT_DOUBLE_EQ(sizing::predict_activations(*c).bytes, 1'138'688);
}

// run_config.model.attention "sdpa" (the trainer on libtorch 2.x): no s² scores kept, so the block drops
// 4·A and, in bf16, the scores' 2·A cast: 679,936 + 131,072 = 811,008 a layer, × 4 = 3,244,032.
TEST(Activations, TheTrainersBlockUnderSdpaKeepsNoScores) {
  sizing::MemoryNa why;
  json rc = model_config(false, "bf16");
  rc["model"]["ffn_dim"] = 344;
  rc["model"]["attention"] = "sdpa";
  auto c = sizing::activation_config_from_run(trace::run_shape_from_json(rc), why);
  ASSERT_TRUE(c) << why.text;
  EXPECT_FALSE(c->scores_kept);
  EXPECT_DOUBLE_EQ(sizing::predict_activations(*c).bytes, 3'244'032);
  rc["model"]["attention"] = "eager";
  EXPECT_TRUE(sizing::activation_config_from_run(trace::run_shape_from_json(rc), why)->scores_kept);
}

TEST(Activations, MissingFieldsAreNamed) {
  sizing::MemoryNa why;
  json rc = model_config(false, "bf16");
  rc.erase("batch_size");
  rc["model"].erase("heads");
  EXPECT_FALSE(sizing::activation_config_from_run(trace::run_shape_from_json(rc), why));
  EXPECT_EQ(why.code, sizing::MemoryNa::Code::NoActivationInputs);
  EXPECT_NE(why.text.find("model.heads"), std::string::npos) << why.text;
  EXPECT_NE(why.text.find("batch_size"), std::string::npos) << why.text;
}

TEST(Activations, TheMemoryComparisonPredictsThemBesideTheMeasured) {
  metrics::RankMemory m = memory_of(model_config(false, "bf16"));
  EXPECT_EQ(predicted(m, "activations"), std::optional<double>(2'883'584));
  ASSERT_TRUE(m.activations);
  EXPECT_DOUBLE_EQ(m.activations->bytes, 2'883'584);
  // Without the model fields in run_config there is nothing to predict, and the comparison says why.
  metrics::RankMemory bare = memory_of(json::object());
  EXPECT_FALSE(predicted(bare, "activations"));
  EXPECT_EQ(bare.activations_na.code, sizing::MemoryNa::Code::NoActivationInputs);
}

}  // namespace
