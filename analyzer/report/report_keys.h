// JSON keys the report, `shardscope memory` and `diff` added after tracer/format/keys.h's report block,
// kept beside the renderers that write them (as prefetch_keys.h is).
#pragma once

namespace shardscope::report::report_keys {

// report: the whole-trace breakdown.
inline constexpr const char* kHtaSetting = "hta_setting";          // the HTA calls and setting reproduced
inline constexpr const char* kLeftOutEvents = "left_out_events";   // device events HTA's step filter drops
// report: device activity the step table leaves out.
inline constexpr const char* kOutsideSteps = "outside_steps";
inline constexpr const char* kBeforeFirstStep = "before_first_step";
inline constexpr const char* kAfterLastStep = "after_last_step";
inline constexpr const char* kDeviceEvents = "device_events";
inline constexpr const char* kBusyNs = "busy_ns";
inline constexpr const char* kFirstStep = "first_step";
inline constexpr const char* kLastStep = "last_step";
// report: collectives of which only some instances carry a size.
inline constexpr const char* kSizedCount = "sized_count";
// memory (report rows and `shardscope memory`).
inline constexpr const char* kSource = "source";  // how the prediction was made
inline constexpr const char* kMemoryCommand = "memory_command";
inline constexpr const char* kShardedParamsBytes = "sharded_params_bytes";
inline constexpr const char* kMasterBytes = "master_bytes";
inline constexpr const char* kGatheredBytes = "gathered_bytes";
inline constexpr const char* kPrecision = "precision";
inline constexpr const char* kShardingGroup = "sharding_group";
inline constexpr const char* kRanksPerNode = "ranks_per_node";
inline constexpr const char* kUnitsInFlight = "units_in_flight";
inline constexpr const char* kLargestUnit = "largest_unit_params";
inline constexpr const char* kRootUnit = "root_unit_params";
inline constexpr const char* kStrategy = "strategy";
// diff: why a side's value is missing.
inline constexpr const char* kNaA = "na_a";
inline constexpr const char* kNaB = "na_b";

}  // namespace shardscope::report::report_keys
