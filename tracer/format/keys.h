// Every string that names a key or a fixed value in a shardscope trace file, in one place (as Kineto does),
// so the writer, the readers and the tests cannot drift apart.
#pragma once

namespace shardscope::keys {

// Chrome Trace Event format, JSON Object Format.
inline constexpr const char* kTraceEvents = "traceEvents";
inline constexpr const char* kDisplayTimeUnit = "displayTimeUnit";
inline constexpr const char* kPh = "ph";
inline constexpr const char* kName = "name";
inline constexpr const char* kCat = "cat";
inline constexpr const char* kPid = "pid";
inline constexpr const char* kTid = "tid";
inline constexpr const char* kTs = "ts";
inline constexpr const char* kDur = "dur";
inline constexpr const char* kId = "id";
inline constexpr const char* kScope = "s";
inline constexpr const char* kArgs = "args";
inline constexpr const char* kBindingPoint = "bp";

// Metadata ("M") event names and their argument keys, understood by Perfetto and chrome://tracing.
inline constexpr const char* kProcessName = "process_name";
inline constexpr const char* kProcessSortIndex = "process_sort_index";
inline constexpr const char* kThreadName = "thread_name";
inline constexpr const char* kThreadSortIndex = "thread_sort_index";
inline constexpr const char* kSortIndex = "sort_index";

// The top-level shardscope object.
inline constexpr const char* kShardscope = "shardscope";
inline constexpr const char* kSchemaVersion = "schema_version";
inline constexpr const char* kRank = "rank";
inline constexpr const char* kWorldSize = "world_size";
inline constexpr const char* kHost = "host";
inline constexpr const char* kOsPid = "os_pid";
inline constexpr const char* kClock = "clock";
inline constexpr const char* kClockDomain = "domain";
inline constexpr const char* kClockUnit = "unit";
inline constexpr const char* kClockSync = "sync";
inline constexpr const char* kRunConfig = "run_config";
inline constexpr const char* kTracer = "tracer";
inline constexpr const char* kTracerVersion = "version";
inline constexpr const char* kFlushIntervalMs = "flush_interval_ms";
inline constexpr const char* kNvtx = "nvtx";
inline constexpr const char* kTimestampSource = "timestamps";
inline constexpr const char* kDroppedRecords = "dropped_records";

// shardscope's own metadata events: a late patch to the top-level object, and a clock pair.
inline constexpr const char* kMetadataPatch = "shardscope_metadata";
inline constexpr const char* kClockSyncEvent = "shardscope_clock_sync";
inline constexpr const char* kMonotonicNs = "monotonic_ns";
inline constexpr const char* kRealtimeNs = "realtime_ns";
inline constexpr const char* kBracketNs = "bracket_ns";

// Argument keys the host tracer writes.
inline constexpr const char* kOsTid = "os_tid";
inline constexpr const char* kValue = "value";

// Categories.
inline constexpr const char* kCatRange = "range";
inline constexpr const char* kCatInstant = "instant";
inline constexpr const char* kCatCounter = "counter";

// --- What the trainer records (the contract between training/ and the analyzer) ---
// Ranges on the compute thread: "step" (cat kCatStep, args step), the phases "forward", "backward",
// "optimizer" (cat kCatPhase), and each unit's compute "unit_forward" / "unit_backward" (cat kCatCompute,
// args unit). Collectives: complete events on a communication track, named by kind ("all_gather",
// "reduce_scatter", "all_reduce"), cat kCatComm, args unit, bytes (per rank, the unsharded size for
// all_gather and the input size for reduce_scatter, as nccl-tests count), group_size, issued_ns (when the
// compute thread issued it, CLOCK_MONOTONIC ns; ts is when it started running). Prefetch decisions:
// instant "prefetch" (cat kCatFsdp, args unit, reason). Memory: counters named kMemory* (bytes).
inline constexpr const char* kCatStep = "step";
inline constexpr const char* kCatPhase = "phase";
inline constexpr const char* kCatCompute = "compute";
inline constexpr const char* kCatComm = "comm";
inline constexpr const char* kCatFsdp = "fsdp";
inline constexpr const char* kStepRange = "step";
inline constexpr const char* kForwardPhase = "forward";
inline constexpr const char* kBackwardPhase = "backward";
inline constexpr const char* kOptimizerPhase = "optimizer";
inline constexpr const char* kUnitForward = "unit_forward";
inline constexpr const char* kUnitBackward = "unit_backward";
inline constexpr const char* kAllGather = "all_gather";
inline constexpr const char* kReduceScatter = "reduce_scatter";
inline constexpr const char* kAllReduce = "all_reduce";
inline constexpr const char* kPrefetch = "prefetch";
inline constexpr const char* kArgStep = "step";
inline constexpr const char* kArgUnit = "unit";
inline constexpr const char* kArgBytes = "bytes";
inline constexpr const char* kArgGroupSize = "group_size";
inline constexpr const char* kArgIssuedNs = "issued_ns";
inline constexpr const char* kArgReason = "reason";
inline constexpr const char* kMemoryShardedParams = "memory.sharded_params";
inline constexpr const char* kMemoryUnshardedParams = "memory.unsharded_params";
inline constexpr const char* kMemoryGradients = "memory.gradients";
inline constexpr const char* kMemoryOptimizerState = "memory.optimizer_state";
inline constexpr const char* kMemoryActivations = "memory.activations";
inline constexpr const char* kMemoryAllocatorTotal = "memory.allocator_total";
// run_config keys: sharding (no_shard|zero1|shard_grad_op|full_shard|hybrid_shard), backward_prefetch
// (none|pre|post), forward_prefetch, limit_all_gathers, param_dtype, reduce_dtype, world_size,
// ranks_per_node, activation_checkpointing, cpu_offload, optimizer, model {preset, layers, dim, heads,
// ffn_dim, vocab, seq_len}, units [{id, name, params, padded_params}].
inline constexpr const char* kCfgSharding = "sharding";
inline constexpr const char* kCfgBackwardPrefetch = "backward_prefetch";
inline constexpr const char* kCfgForwardPrefetch = "forward_prefetch";
inline constexpr const char* kCfgLimitAllGathers = "limit_all_gathers";
inline constexpr const char* kCfgParamDtype = "param_dtype";
inline constexpr const char* kCfgReduceDtype = "reduce_dtype";
inline constexpr const char* kCfgRanksPerNode = "ranks_per_node";
inline constexpr const char* kCfgActivationCheckpointing = "activation_checkpointing";
inline constexpr const char* kCfgCpuOffload = "cpu_offload";
inline constexpr const char* kCfgOptimizer = "optimizer";
inline constexpr const char* kCfgModel = "model";
inline constexpr const char* kCfgUnits = "units";
inline constexpr const char* kCfgUnitId = "id";
inline constexpr const char* kCfgUnitParams = "params";
inline constexpr const char* kCfgUnitPaddedParams = "padded_params";

// Fixed values.
inline constexpr const char* kClockMonotonic = "CLOCK_MONOTONIC";
inline constexpr const char* kUnitNs = "ns";
inline constexpr int kSchemaVersionValue = 1;

}  // namespace shardscope::keys
