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

// Rank::metadata key an importer may set: per collective kind ("all_gather", ...), how many of its ops named
// each element dtype ("Float", "BFloat16": PyTorch's record_param_comms args), e.g. {"all_gather":
// {"BFloat16": 25}}. The memory model's inputs read the parameters' dtype from it.
inline constexpr const char* kMetaCollectiveDtypes = "collective_dtypes";

// --- What the trainer records (the contract between training/ and the analyzer) ---
// Ranges on the compute thread: "step" (cat kCatStep, args step, and kArgAborted on a step that did not
// complete), the phases "forward", "backward",
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
// On a "step" range that did not complete (an exception in the step, a lost peer, SIGTERM/SIGINT): why, as
// the trainer said it. The range ends where the step was cut off; analyses leave such a step out.
inline constexpr const char* kArgAborted = "aborted";
inline constexpr const char* kArgUnit = "unit";
inline constexpr const char* kArgBytes = "bytes";
inline constexpr const char* kArgGroupSize = "group_size";
inline constexpr const char* kArgIssuedNs = "issued_ns";
inline constexpr const char* kArgReason = "reason";
// Instant (cat kCatFsdp, args unit) each time the rate limiter (limit_all_gathers) holds an all-gather's
// issue back because the all-gathers in flight are at the limit.
inline constexpr const char* kRateLimited = "rate_limited";
// Range (cat kCatPhase, args unit) around a planted straggler's sleep (shardscope-train --slow-rank).
inline constexpr const char* kPlantedDelay = "planted_delay";
inline constexpr const char* kMemoryShardedParams = "memory.sharded_params";
inline constexpr const char* kMemoryUnshardedParams = "memory.unsharded_params";
inline constexpr const char* kMemoryGradients = "memory.gradients";
inline constexpr const char* kMemoryOptimizerState = "memory.optimizer_state";
inline constexpr const char* kMemoryActivations = "memory.activations";
inline constexpr const char* kMemoryAllocatorTotal = "memory.allocator_total";
// On a GPU, sampled with the total: the CUDA caching allocator's reserved and allocated bytes (its
// AGGREGATE stats), so that what no category counts splits into the blocks it holds free, tensors no
// category counts, and what lies outside it (the CUDA context, NCCL's buffers).
inline constexpr const char* kMemoryAllocatorReserved = "memory.allocator_reserved";
inline constexpr const char* kMemoryAllocatorAllocated = "memory.allocator_allocated";
// --cpu-offload: the sharded state (fp32 parameter shard, gradient shard, optimizer state) held on the host.
inline constexpr const char* kMemoryHostOffloaded = "memory.host_offloaded";
// run_config keys: sharding (no_shard|zero1|shard_grad_op|full_shard|hybrid_shard), backward_prefetch
// (none|pre|post), forward_prefetch, limit_all_gathers, param_dtype, reduce_dtype, world_size,
// ranks_per_node, activation_checkpointing, cpu_offload, optimizer, model {preset, layers, dim, heads,
// ffn_dim, vocab, seq_len}, units [{id, name, params, padded_params}].
inline constexpr const char* kCfgSharding = "sharding";
inline constexpr const char* kCfgBackwardPrefetch = "backward_prefetch";
inline constexpr const char* kCfgForwardPrefetch = "forward_prefetch";
inline constexpr const char* kCfgLimitAllGathers = "limit_all_gathers";
inline constexpr const char* kCfgPlantedDelay = "planted_delay";  // {rank, ms}: --slow-rank, when set
inline constexpr const char* kCfgPlantedDelayMs = "ms";
inline constexpr const char* kCfgParamDtype = "param_dtype";
inline constexpr const char* kCfgReduceDtype = "reduce_dtype";
inline constexpr const char* kCfgRanksPerNode = "ranks_per_node";
inline constexpr const char* kCfgActivationCheckpointing = "activation_checkpointing";
inline constexpr const char* kCfgCpuOffload = "cpu_offload";
inline constexpr const char* kCfgOptimizer = "optimizer";
inline constexpr const char* kCfgModel = "model";
inline constexpr const char* kCfgUnits = "units";
inline constexpr const char* kCfgUnitId = "id";
// Unit 0 is the root (embedding, final norm, head), which FSDP keeps gathered from forward through backward;
// the trainer numbers it so, and the importers number PyTorch's root module so.
inline constexpr int kRootUnit = 0;
inline constexpr const char* kCfgUnitParams = "params";
inline constexpr const char* kCfgUnitPaddedParams = "padded_params";
inline constexpr const char* kCfgBatchSize = "batch_size";  // sequences per rank per step
inline constexpr const char* kCfgModelLayers = "layers";    // the keys inside run_config.model
inline constexpr const char* kCfgModelDim = "dim";
inline constexpr const char* kCfgModelHeads = "heads";
inline constexpr const char* kCfgModelSeqLen = "seq_len";
inline constexpr const char* kCfgModelFfnDim = "ffn_dim";  // the SwiGLU FFN's width
// "sdpa" (fused: no s² scores kept for backward) or "eager" (the scores kept); absent: eager.
inline constexpr const char* kCfgModelAttention = "attention";

// --- What the CUPTI backend records (tracer/cupti/) ---
// Track names below are patterns: each "{}" is replaced by a number, in order.
// GPU work goes on one named track per (device, stream): "GPU <d> stream <s>"; CUDA API calls on one track
// per OS thread: "CUDA API thread <tid>"; NVTX ranges captured by CUPTI on "NVTX thread <tid>"; CUPTI's
// own overhead on "CUPTI overhead". A launch and the GPU work it started share a flow (ph "s" on the API
// call, ph "f" with bp "e" on the GPU event, same id, name kFlowLaunch, cat kCatFlow).
inline constexpr const char* kGpuStreamTrack = "GPU {} stream {}";
inline constexpr const char* kGpuSyncTrack = "GPU {} synchronization";
inline constexpr const char* kCudaApiTrack = "CUDA API thread {}";
inline constexpr const char* kNvtxTrack = "NVTX thread {}";
inline constexpr const char* kCuptiOverheadTrack = "CUPTI overhead";
inline constexpr const char* kCatKernel = "kernel";
inline constexpr const char* kCatMemcpy = "memcpy";
inline constexpr const char* kCatMemset = "memset";
inline constexpr const char* kCatSync = "sync";
inline constexpr const char* kCatCudaRuntime = "cuda_runtime";
inline constexpr const char* kCatCudaDriver = "cuda_driver";
inline constexpr const char* kCatNvtx = "nvtx";
inline constexpr const char* kCatOverhead = "overhead";
inline constexpr const char* kCatFlow = "cuda_flow";
inline constexpr const char* kFlowLaunch = "launch";
// Per-device bytes allocated through CUDA (cudaMalloc, pools) since tracing began: "gpu<d>.memory_allocated".
inline constexpr const char* kGpuMemoryCounter = "gpu{}.memory_allocated";
// Arguments of GPU events. NCCL kernels (cat kCatComm) also carry kArgCollective (all_gather,
// reduce_scatter, all_reduce, broadcast, reduce, send_recv, all_to_all; absent when neither the kernel name
// nor an NVTX range says it), and kArgNcclOp / kArgNcclGroupOps from NCCL's NVTX ranges when present.
// From the extended payload of NCCL's range (on the range, and on the kernel launched inside it; a group's
// kernel gets the byte counts summed and the values all its collectives share): kArgNcclMessageBytes (NCCL's
// "Message size [bytes]": one rank's send size for all_gather, its receive size for reduce_scatter, else
// count x type size), kArgBytes too where that equals the trainer's bytes (all_reduce, broadcast, reduce,
// send_recv), kArgReduceOp (the enum's name lowercased: "sum", "product", "max", "min", "avg"; the number
// when unnamed), kArgNcclComm (communicator hash, "0x" + 16 hex digits), kArgRoot, kArgPeer.
inline constexpr const char* kArgDevice = "device";
inline constexpr const char* kArgStream = "stream";
inline constexpr const char* kArgContext = "context";
inline constexpr const char* kArgCorrelation = "correlation";
inline constexpr const char* kArgExternalId = "external_id";
inline constexpr const char* kArgExternalKind = "external_kind";
// The trainer's collectives on a GPU: around each NCCL call the comm thread pushes the collective's
// kArgIssuedNs (the identity its host range already carries; a host record holds 4 args, all in use) as a
// CUPTI external correlation id of this kind (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0), so every record
// that call launched carries external_kind = this and external_id = the host range's issued_ns.
inline constexpr int kExternalKindTrainerCollective = 3;
inline constexpr const char* kArgGrid = "grid";
inline constexpr const char* kArgBlock = "block";
inline constexpr const char* kArgRegistersPerThread = "registers_per_thread";
inline constexpr const char* kArgSharedMemory = "shared_memory";
inline constexpr const char* kArgCopyKind = "copy_kind";
inline constexpr const char* kArgMemsetValue = "memset_value";
inline constexpr const char* kArgReturnValue = "return_value";
inline constexpr const char* kArgCudaEvent = "cuda_event";
inline constexpr const char* kArgDomain = "domain";
inline constexpr const char* kArgPayload = "payload";
inline constexpr const char* kArgColor = "color";
inline constexpr const char* kArgCategory = "category";
inline constexpr const char* kArgObject = "object";
inline constexpr const char* kArgCollective = "collective";
inline constexpr const char* kArgNcclOp = "nccl_op";
inline constexpr const char* kArgNcclGroupOps = "nccl_group_ops";
inline constexpr const char* kArgNcclMessageBytes = "nccl_message_bytes";
inline constexpr const char* kArgReduceOp = "reduce_op";
inline constexpr const char* kArgNcclComm = "nccl_comm";
inline constexpr const char* kArgRoot = "root";
inline constexpr const char* kArgPeer = "peer";
// Header keys (patched in while tracing): GPU records CUPTI dropped, and how GPU tracing went.
inline constexpr const char* kDroppedGpuRecords = "dropped_gpu_records";
inline constexpr const char* kGpuTracing = "gpu_tracing";
inline constexpr const char* kGpuBackend = "backend";  // "cupti" or "none"
inline constexpr const char* kGpuBackendCupti = "cupti";
inline constexpr const char* kGpuBackendNone = "none";
inline constexpr const char* kGpuReason = "reason";
inline constexpr const char* kCuptiVersion = "cupti_api_version";
inline constexpr const char* kGpuDevices = "devices";
inline constexpr const char* kNvtxInjection = "nvtx_injection";
inline constexpr const char* kGpuClockOffsetNs = "clock_offset_ns";  // CLOCK_MONOTONIC = CUPTI ts + offset
inline constexpr const char* kGpuClockBracketNs = "clock_bracket_ns";

// Fixed values.
inline constexpr const char* kClockMonotonic = "CLOCK_MONOTONIC";
inline constexpr const char* kUnitNs = "ns";
inline constexpr int kSchemaVersionValue = 1;

}  // namespace shardscope::keys
