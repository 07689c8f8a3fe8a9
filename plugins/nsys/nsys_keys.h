// Every table, column and fixed string of an Nsight Systems SQLite export (`nsys export --type sqlite`) that
// the importer reads. Exports differ by release: the importer asks which of these exist and reads what is
// there (nsys_schema.h).
#pragma once

#include <cstdint>

namespace shardscope::nsys_keys {

// Tables.
inline constexpr const char* kStringIds = "StringIds";
inline constexpr const char* kKernel = "CUPTI_ACTIVITY_KIND_KERNEL";
inline constexpr const char* kMemcpy = "CUPTI_ACTIVITY_KIND_MEMCPY";
inline constexpr const char* kMemset = "CUPTI_ACTIVITY_KIND_MEMSET";
inline constexpr const char* kSync = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
// One row a CUDA graph's launch, in graph-trace mode (`--cuda-graph-trace=graph`, the default); in node mode
// the graph's kernels are rows of kKernel (with a graphNodeId) instead.
inline constexpr const char* kGraphTrace = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
// Tables of GPU work the importer does not read (graphs launched from the device, graphics APIs' workloads):
// named in a warning where an export has rows in them, since the device time they hold is left out.
inline constexpr const char* kUnreadGpuWork[] = {"CUPTI_ACTIVITY_KIND_DEVICE_GRAPH_TRACE", "VULKAN_WORKLOAD",
                                                 "OPENGL_WORKLOAD", "DX12_WORKLOAD"};
inline constexpr const char* kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
// CUDA's device memory allocations and frees, with `--cuda-memory-usage=true` (plugins/nsys/nsys_memory.h).
inline constexpr const char* kGpuMemoryUsage = "CUDA_GPU_MEMORY_USAGE_EVENTS";
inline constexpr const char* kNvtx = "NVTX_EVENTS";
inline constexpr const char* kPayloadSchemas = "NVTX_PAYLOAD_SCHEMAS";
inline constexpr const char* kPayloadEntries = "NVTX_PAYLOAD_SCHEMA_ENTRIES";
inline constexpr const char* kProcesses = "PROCESSES";
inline constexpr const char* kThreadNames = "ThreadNames";
inline constexpr const char* kSessionStart = "TARGET_INFO_SESSION_START_TIME";
inline constexpr const char* kMetaExport = "META_DATA_EXPORT";     // schema 3.x
inline constexpr const char* kMetaCapture = "META_DATA_CAPTURE";   // schema 3.x: the launched processes' environments
inline constexpr const char* kOldMetaExport = "EXPORT_META_DATA";  // schema 2.x names

// Columns.
inline constexpr const char* kId = "id";
inline constexpr const char* kValue = "value";
inline constexpr const char* kStart = "start";
inline constexpr const char* kEnd = "end";
inline constexpr const char* kDeviceId = "deviceId";
inline constexpr const char* kStreamId = "streamId";
inline constexpr const char* kCorrelationId = "correlationId";
inline constexpr const char* kGlobalPid = "globalPid";
inline constexpr const char* kGlobalTid = "globalTid";
inline constexpr const char* kShortName = "shortName";
inline constexpr const char* kDemangledName = "demangledName";
inline constexpr const char* kBytes = "bytes";
inline constexpr const char* kCopyKind = "copyKind";
inline constexpr const char* kSyncType = "syncType";
inline constexpr const char* kNameId = "nameId";
inline constexpr const char* kEventType = "eventType";
inline constexpr const char* kText = "text";
inline constexpr const char* kTextId = "textId";
inline constexpr const char* kDomainId = "domainId";
inline constexpr const char* kJsonText = "jsonText";
inline constexpr const char* kBinaryData = "binaryData";  // NVTX binary payload (plugins/nsys/nvtx_schemas.h)
inline constexpr const char* kSchemaId = "schemaId";
inline constexpr const char* kType = "type";
inline constexpr const char* kOffset = "offset";
inline constexpr const char* kIdx = "idx";  // a schema entry's place
inline constexpr const char* kPayloadSize = "payloadSize";
inline constexpr const char* kInt64Value = "int64Value";  // NVTX payload (shardscope-train: the unit or step number)
inline constexpr const char* kPid = "pid";
inline constexpr const char* kName = "name";
inline constexpr const char* kUtcEpochNs = "utcEpochNs";
inline constexpr const char* kGridX = "gridX";
inline constexpr const char* kBlockX = "blockX";
inline constexpr const char* kGraphId = "graphId";
inline constexpr const char* kAddress = "address";
inline constexpr const char* kMemKind = "memKind";                          // ENUM_CUDA_MEM_KIND
inline constexpr const char* kMemoryOperationType = "memoryOperationType";  // ENUM_CUDA_DEV_MEM_EVENT_OPER
// NCCL's composite table (newer releases; plugins/nsys/nccl_ops.h): found by kCommHash and kSeqNumber, the
// other names assumed from NCCL's own (not confirmed against a real export).
inline constexpr const char* kCommHash = "commHash";
inline constexpr const char* kSeqNumber = "seqNumber";
inline constexpr const char* kOperationId = "operationId";
inline constexpr const char* kMessageSize = "messageSize";
// Its communicator's size, where it has one (nccl_comms.h): the first of these it has, in this order.
inline constexpr const char* kNcclTableRanks[] = {"nranks",   "nRanks",     "numRanks",
                                                  "commSize", "commNranks", "groupSize"};

// META_DATA_EXPORT / META_DATA_CAPTURE rows.
inline constexpr const char* kMetaName = "name";
inline constexpr const char* kMetaValue = "value";
inline constexpr const char* kSchemaVersion = "EXPORT_SCHEMA_VERSION";
inline constexpr const char* kProductVersion = "EXPORT_PRODUCT_VERSION";
inline constexpr const char* kProcessPrefix = "PROCESS_";  // PROCESS_0:PID, PROCESS_0:ENVIRONMENT_VARIABLE
inline constexpr const char* kEnvSuffix = ":ENVIRONMENT_VARIABLE";
inline constexpr const char* kPidSuffix = ":PID";
// The launcher variables that say a process's rank, in the order they are believed.
inline constexpr const char* kRankVariables[] = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"};
inline constexpr const char* kWorldVariables[] = {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE"};

// globalTid / globalPid: (vm, pid, tid) packed; the process is everything above the low 24 bits.
inline constexpr int kTidBits = 24;
inline constexpr int64_t kTidMask = (int64_t(1) << kTidBits) - 1;

// ENUM_CUDA_DEV_MEM_EVENT_OPER and the host kinds of ENUM_CUDA_MEM_KIND (as real exports list them).
inline constexpr int kMemAllocation = 0;
inline constexpr int kMemDeallocation = 1;
inline constexpr int kMemKindPageable = 0;
inline constexpr int kMemKindPinned = 1;
inline constexpr int kMemKindDevice = 2;

// ENUM_NSYS_EVENT_TYPE ids of NVTX events.
inline constexpr int kNvtxMark = 34;
inline constexpr int kNvtxPushPopRange = 59;
inline constexpr int kNvtxStartEndRange = 60;
inline constexpr int kNvtxtPushPopRange = 70;  // NVTX-text (nvtxt) variants
inline constexpr int kNvtxtStartEndRange = 71;
inline constexpr int kNvtxDomainCreate = 75;

// Categories the importer gives events (Kineto's, so the analysis treats them alike).
inline constexpr const char* kCatKernel = "kernel";
inline constexpr const char* kCatMemcpy = "gpu_memcpy";
inline constexpr const char* kCatMemset = "gpu_memset";
inline constexpr const char* kCatSync = "cuda_sync";
inline constexpr const char* kCatGraph = "cuda_graph";   // a whole graph launch (kGraphTrace)
inline constexpr const char* kGraphName = "CUDA graph";  // its name, with the graph's id after it
inline constexpr const char* kCatRuntime = "cuda_runtime";
inline constexpr const char* kCatDriver = "cuda_driver";
inline constexpr const char* kCatNvtx = "nvtx";  // the default domain; another domain's ranges take its name

// NCCL's NVTX domain and its ranges (NCCL >= 2.18 names its API calls in domain "NCCL").
inline constexpr const char* kNcclDomain = "NCCL";
inline constexpr const char* kNcclGroupStart = "ncclGroupStart";
inline constexpr const char* kNcclGroupEnd = "ncclGroupEnd";
inline constexpr const char* kNcclSend = "ncclSend";
inline constexpr const char* kNcclRecv = "ncclRecv";
inline constexpr const char* kNcclCommSplit = "ncclCommSplit";  // creates a communicator, as ncclCommInitRank* do
// Payload fields of NCCL's NVTX schemas (nccl src/include/nvtx_payload_schemas.h), by entry name.
inline constexpr const char* kPayloadBytes = "Message size [bytes]";
inline constexpr const char* kPayloadPeer = "Peer rank";
inline constexpr const char* kPayloadRanks = "No. of ranks";
inline constexpr const char* kPayloadRank = "Rank";
inline constexpr const char* kPayloadComm = "NCCL communicator ID";
// The arg a send/recv kernel carries its peer rank in (the model has no field for it).
inline constexpr const char* kArgPeer = "peer";

// CUPTI_ACTIVITY_MEMCPY_KIND and CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE, as Kineto names them.
inline constexpr const char* kMemcpyKinds[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                               "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
inline constexpr const char* kSyncNames[] = {"Unknown Sync", "Event Sync", "Stream Wait Event", "Stream Sync",
                                             "Context Sync"};

}  // namespace shardscope::nsys_keys
