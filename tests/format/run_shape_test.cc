// The run's shape (tracer/format/run_shape.h): what the trainer writes reads back as it was written, field by
// field, and the JSON it writes is the run_config it always wrote; a field of the wrong type reads as absent.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tracer/format/keys.h"
#include "tracer/format/run_shape.h"

using namespace shardscope;
using nlohmann::json;
namespace k = shardscope::keys;

namespace {

trace::RunShape trainer_shape() {
  return {.given = true,
          .sharding = "hybrid_shard",
          .backward_prefetch = "post",
          .forward_prefetch = true,
          .limit_all_gathers = 3,
          .param_dtype = "bf16",
          .reduce_dtype = "fp32",
          .world_size = 8,
          .ranks_per_node = 4,
          .activation_checkpointing = true,
          .cpu_offload = true,
          .batch_size = 2,
          .model = {4, 256, 8, 128},
          .units = {{0, "root", 1000, 1004}, {1, "block0", 500, 504}}};
}

TEST(RunShape, WhatTheTrainerWritesReadsBackFieldByField) {
  const trace::RunShape s = trainer_shape();
  const json j = trace::to_json(s);
  EXPECT_EQ(trace::run_shape_from_json(j), s);
  // Counts are written as integers, as the trainer always wrote them.
  EXPECT_TRUE(j[k::kCfgUnits][1][k::kCfgUnitParams].is_number_integer());
  EXPECT_TRUE(j[k::kCfgModel][k::kCfgModelDim].is_number_integer());
  EXPECT_EQ(j.dump(),
            R"({"activation_checkpointing":true,"backward_prefetch":"post","batch_size":2,"cpu_offload":true,)"
            R"("forward_prefetch":true,"limit_all_gathers":3,"model":{"dim":256,"heads":8,"layers":4,"seq_len":128},)"
            R"("param_dtype":"bf16","ranks_per_node":4,"reduce_dtype":"fp32","sharding":"hybrid_shard",)"
            R"("units":[{"id":0,"name":"root","padded_params":1004,"params":1000},)"
            R"({"id":1,"name":"block0","padded_params":504,"params":500}],"world_size":8})");
  EXPECT_EQ(s.strategy(), trace::Sharding::HybridShard);
  EXPECT_EQ(s.prefetch(), trace::BackwardPrefetch::Post);
  EXPECT_EQ(s.unit_name(1), "block0");
  EXPECT_EQ(s.unit_name(7), "");
}

TEST(RunShape, NoRunConfigIsNotGiven) {
  EXPECT_FALSE(trace::run_shape_from_json(json()).given);
  EXPECT_FALSE(trace::run_shape_from_json(json::array()).given);
  EXPECT_TRUE(trace::run_shape_from_json(json::object()).given);
}

TEST(RunShape, FieldsOfTheWrongTypeReadAsAbsent) {
  const json j = {{k::kCfgSharding, 3},
                  {k::kCfgBackwardPrefetch, {1}},
                  {k::kCfgLimitAllGathers, "2"},
                  {k::kCfgParamDtype, 16},
                  {k::kWorldSize, 1e300},
                  {k::kCfgBatchSize, "2"},
                  {k::kCfgModel, "llama"},
                  {k::kCfgUnits, {{{k::kCfgUnitId, 0.5}, {k::kName, 7}, {k::kCfgUnitParams, "many"}}, "x"}}};
  const trace::RunShape s = trace::run_shape_from_json(j);
  EXPECT_TRUE(s.given);
  EXPECT_EQ(s.sharding, "");
  EXPECT_FALSE(s.strategy());
  EXPECT_EQ(s.backward_prefetch, "");
  EXPECT_EQ(s.limit_all_gathers, 0);
  EXPECT_FALSE(s.param_dtype);
  EXPECT_EQ(s.world_size, 0);
  EXPECT_FALSE(s.batch_size);
  EXPECT_EQ(s.model, trace::ModelShape{});
  ASSERT_EQ(s.units.size(), 2u);  // each entry kept, so that an n/a can give its index
  EXPECT_EQ(s.units[0], (trace::UnitShape{-1, "", {}, {}}));
  EXPECT_EQ(s.units[1], (trace::UnitShape{-1, "", {}, {}}));
}

TEST(RunShape, TheLimiterFlagOfFsdp1IsItsLimit) {
  EXPECT_EQ(trace::run_shape_from_json({{k::kCfgLimitAllGathers, true}}).limit_all_gathers,
            trace::kFsdp1AllGatherLimit);
  EXPECT_EQ(trace::run_shape_from_json({{k::kCfgLimitAllGathers, false}}).limit_all_gathers, 0);
  EXPECT_EQ(trace::run_shape_from_json({{k::kCfgLimitAllGathers, 1e12}}).limit_all_gathers, 1000000);
  EXPECT_EQ(trace::run_shape_from_json({{k::kCfgLimitAllGathers, 0.5}}).limit_all_gathers, 0);
}

}  // namespace
