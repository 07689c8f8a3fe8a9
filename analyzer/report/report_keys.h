// Every key of the analyzer's JSON outputs (`shardscope report --format json`, `memory`, `diff`,
// `check-prefetch`), in one place beside the renderers that write them; the trace file's own vocabulary is
// tracer/format/keys.h, which this never touches.
#pragma once

namespace shardscope::report::report_keys {

// The report's top level and its per-rank blocks.
inline constexpr const char* kSchema = "schema";
inline constexpr const char* kSchemaValue = "shardscope.report/1";
inline constexpr const char* kMemorySchemaValue = "shardscope.memory/1";
inline constexpr const char* kInputs = "inputs";
inline constexpr const char* kWarnings = "warnings";
inline constexpr const char* kNotes = "notes";
inline constexpr const char* kRanks = "ranks";
inline constexpr const char* kRank = "rank";
inline constexpr const char* kFormat = "format";
inline constexpr const char* kEvents = "events";
inline constexpr const char* kNa = "na";  // {metric: "n/a: why"} beside a metric that is null
inline constexpr const char* kWholeTrace = "whole_trace";
inline constexpr const char* kWindowNs = "window_ns";
inline constexpr const char* kOverlapPct = "overlap_pct";
inline constexpr const char* kIdlePct = "idle_pct";
inline constexpr const char* kComputePct = "compute_pct";
inline constexpr const char* kNonComputePct = "non_compute_pct";
inline constexpr const char* kSteps = "steps";
inline constexpr const char* kAllSteps = "all_steps";
inline constexpr const char* kStepsMadeBy = "steps_made_by";
inline constexpr const char* kStep = "step";
inline constexpr const char* kStartNs = "start_ns";
inline constexpr const char* kStepNs = "step_ns";
inline constexpr const char* kComputeNs = "compute_ns";
inline constexpr const char* kCommNs = "comm_ns";
inline constexpr const char* kOverlapNs = "overlap_ns";
inline constexpr const char* kExposedNs = "exposed_ns";
inline constexpr const char* kIdleNs = "idle_ns";
inline constexpr const char* kCommFractionPct = "comm_fraction_pct";
inline constexpr const char* kExposedFractionPct = "exposed_fraction_pct";
inline constexpr const char* kCollectives = "collectives";
inline constexpr const char* kKind = "kind";
inline constexpr const char* kCount = "count";
inline constexpr const char* kBytes = "bytes";
inline constexpr const char* kTimeNs = "time_ns";
inline constexpr const char* kAlgbwGbps = "algbw_gbps";
inline constexpr const char* kBusbwGbps = "busbw_gbps";
inline constexpr const char* kGroupSize = "group_size";
inline constexpr const char* kStragglers = "stragglers";
inline constexpr const char* kSummary = "summary";
inline constexpr const char* kDefinitions =
    "definitions";  // each table column's meaning (report/definitions.h)  // the run summary (report/summary_render.h)
inline constexpr const char* kInstances = "instances";
inline constexpr const char* kOrdinal = "ordinal";
inline constexpr const char* kLastRank = "last_rank";
inline constexpr const char* kLateByNs = "late_by_ns";
inline constexpr const char* kSpreadNs = "spread_ns";
inline constexpr const char* kTimesLast = "times_last";
inline constexpr const char* kTotalLateByNs = "total_late_by_ns";
inline constexpr const char* kMaxLateByNs = "max_late_by_ns";
inline constexpr const char* kPrefetch = "prefetch";
inline constexpr const char* kConfigured = "configured";
inline constexpr const char* kVerdict = "verdict";
inline constexpr const char* kReason = "reason";
inline constexpr const char* kUnits = "units";
inline constexpr const char* kUnit = "unit";
inline constexpr const char* kNextUnit = "next_unit";
inline constexpr const char* kIssueLeadNs = "issue_lead_ns";
inline constexpr const char* kHiddenShare = "hidden_share";
inline constexpr const char* kExposedWaitNs = "exposed_wait_ns";
inline constexpr const char* kAllGatherNs = "all_gather_ns";
inline constexpr const char* kSerializedBehindRs = "serialized_behind_reduce_scatter";
inline constexpr const char* kThrottled = "throttled_by_rate_limiter";
inline constexpr const char* kUnitIdentity = "unit_identity";  // how units were identified, when not named
inline constexpr const char* kActivationsModel = "activations_model";
inline constexpr const char* kStatesModel =
    "states_model";  // how the model states were predicted  // how activations were predicted
inline constexpr const char* kMemory = "memory";
inline constexpr const char* kRows = "rows";
inline constexpr const char* kCategory = "category";
inline constexpr const char* kMeasuredBytes = "measured_bytes";
inline constexpr const char* kPredictedBytes = "predicted_bytes";
inline constexpr const char* kDepartsMost = "departs_most";
// The activation estimate beside the measurement (within 15 % or why not), whether it is within, and why
// the rest row is not split into cached_free and other_allocated.
inline constexpr const char* kActivationsVsMeasured = "activations_vs_measured";
inline constexpr const char* kActivationsWithin = "activations_within";
inline constexpr const char* kRestSplit = "rest_split";
// The memory measured from the allocator's events (metrics/memory_measured.h).
inline constexpr const char* kMeasured = "measured";
inline constexpr const char* kAllocatorEvents = "allocator_events";
inline constexpr const char* kDevice = "device";
inline constexpr const char* kPeak = "peak";
inline constexpr const char* kPeakAllocatedBytes = "peak_allocated_bytes";
inline constexpr const char* kPeakReservedBytes = "peak_reserved_bytes";
inline constexpr const char* kPeakStep = "peak_step";
inline constexpr const char* kPeakAgain = "peak_again_in_steps";
inline constexpr const char* kAliveAtPeak = "alive_at_peak";
inline constexpr const char* kMade = "made";
inline constexpr const char* kAllocations = "allocations";
inline constexpr const char* kBeforeTraceBytes = "before_trace_bytes";
inline constexpr const char* kBeforeTraceLeftBytes = "before_trace_left_at_peak_bytes";
inline constexpr const char* kCaveats = "caveats";
inline constexpr const char* kHint = "hint";
inline constexpr const char* kModelStatesBytes = "model_states_bytes";
inline constexpr const char* kParamsBytes = "params_bytes";
inline constexpr const char* kGradientsBytes = "gradients_bytes";
inline constexpr const char* kOptimizerStateBytes = "optimizer_state_bytes";
inline constexpr const char* kUnshardedParamsBytes = "unsharded_params_bytes";
inline constexpr const char* kHostOffloadedBytes = "host_offloaded_bytes";
inline constexpr const char* kParams = "params";
inline constexpr const char* kWorld = "world";
inline constexpr const char* kStage = "stage";
inline constexpr const char* kDtype = "dtype";
inline constexpr const char* kOffload = "offload";
inline constexpr const char* kStages = "stages";
inline constexpr const char* kDiff = "diff";
inline constexpr const char* kMetric = "metric";
inline constexpr const char* kA = "a";
inline constexpr const char* kB = "b";
inline constexpr const char* kDelta = "delta";
inline constexpr const char* kTopDevice = "top_device";
inline constexpr const char* kName = "name";
inline constexpr const char* kClass = "class";

// Added later: what the report explains about itself.

// report: the whole-trace breakdown.
inline constexpr const char* kHtaSetting = "hta_setting";         // the HTA calls and setting reproduced
inline constexpr const char* kLeftOutEvents = "left_out_events";  // device events HTA's step filter drops
inline constexpr const char* kExact = "exact";  // the same figures unrounded, in the trace's own resolution
// report: device activity the step table leaves out.
inline constexpr const char* kOutsideSteps = "outside_steps";
inline constexpr const char* kBeforeFirstStep = "before_first_step";
inline constexpr const char* kAfterLastStep = "after_last_step";
inline constexpr const char* kDeviceEvents = "device_events";
inline constexpr const char* kBusyNs = "busy_ns";
inline constexpr const char* kFirstStep = "first_step";
inline constexpr const char* kLastStep = "last_step";
// report: steps the trace marks as not completed (left out of all_steps and the prefetch verdict).
inline constexpr const char* kAborted = "aborted";             // on such a step's row: true
inline constexpr const char* kAbortedSteps = "aborted_steps";  // {steps: [N, ...], reason}
// report: collectives of which only some instances carry a size.
inline constexpr const char* kSizedCount = "sized_count";
// Collectives across ranks (#26): a rank's time beyond the fastest rank's, and the link's own numbers.
inline constexpr const char* kLinkNs = "link_ns";
inline constexpr const char* kPairing = "pairing";  // "sequence", "position", "mixed"
inline constexpr const char* kBySeq = "by_seq";
inline constexpr const char* kWaitPct = "wait_pct";
inline constexpr const char* kLinks = "links";
inline constexpr const char* kFastestNs = "fastest_ns";
// memory (report rows and `shardscope memory`).
inline constexpr const char* kSource = "source";  // how the prediction was made
inline constexpr const char* kMemoryCommand = "memory_command";
// The model's inputs where any was read off the trace or given by a flag: per input its value, origin
// ("inferred", "given", "run_config", "unknown"), from (in words, when inferred), reason (when unknown).
inline constexpr const char* kModelInputs = "model_inputs";
inline constexpr const char* kValue = "value";
inline constexpr const char* kOrigin = "origin";
inline constexpr const char* kFrom = "from";
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
// `shardscope memory`: whether each strategy fits the device.
// kDevice ("device", above): memory's {name, bytes, data_sheet}
inline constexpr const char* kDataSheet = "data_sheet";
inline constexpr const char* kActivationsBytes = "activations_bytes";
inline constexpr const char* kActivationsInputs = "activations_inputs";
inline constexpr const char* kTotalBytes = "total_bytes";
inline constexpr const char* kHeadroomBytes = "headroom_bytes";  // device − total; negative: over the device
inline constexpr const char* kFits = "fits";
// report memory rows: the row's bytes where the categories together hold the most (they add up to
// allocator_total there, with the rest row).
inline constexpr const char* kAtFullestBytes = "at_fullest_bytes";
// diff: why a side's value is missing.
inline constexpr const char* kNaA = "na_a";
inline constexpr const char* kNaB = "na_b";

}  // namespace shardscope::report::report_keys
