// Every key and fixed string of PyTorch profiler (Kineto) Chrome-trace JSON that the importer reads
// (libkineto output_json.cpp, MetadataFieldCatalog.h, torch/profiler/profiler.py).
#pragma once

namespace shardscope::kineto_keys {

// Top level.
inline constexpr const char* kTraceEvents = "traceEvents";
inline constexpr const char* kBaseTimeNanoseconds = "baseTimeNanoseconds";
inline constexpr const char* kDistributedInfo = "distributedInfo";
inline constexpr const char* kRank = "rank";
inline constexpr const char* kWorldSize = "world_size";
inline constexpr const char* kBackend = "backend";
inline constexpr const char* kSchemaVersion = "schemaVersion";
inline constexpr const char* kDeviceProperties = "deviceProperties";

// Event fields.
inline constexpr const char* kPh = "ph";
inline constexpr const char* kCat = "cat";
inline constexpr const char* kName = "name";
inline constexpr const char* kPid = "pid";
inline constexpr const char* kTid = "tid";
inline constexpr const char* kTs = "ts";
inline constexpr const char* kDur = "dur";
inline constexpr const char* kArgs = "args";

// Args.
inline constexpr const char* kStream = "stream";
inline constexpr const char* kCorrelation = "correlation";
inline constexpr const char* kExternalId = "External id";
inline constexpr const char* kCollectiveName = "Collective name";
inline constexpr const char* kInMsgNelems = "In msg nelems";
inline constexpr const char* kOutMsgNelems = "Out msg nelems";
inline constexpr const char* kGroupSize = "Group size";
inline constexpr const char* kSeq = "Seq";  // the collective's place in its process group (newer PyTorch)
inline constexpr const char* kProcessGroupName = "Process Group Name";
inline constexpr const char* kDtype = "dtype";
inline constexpr const char* kBytes = "bytes";
inline constexpr const char* kDeviceType = "Device Type";
inline constexpr const char* kInputDims = "Input Dims";  // CPU ops: one shape a tensor input, "[[888, 2880], []]"
inline constexpr const char* kInputType = "Input type";  // CPU ops: one dtype a tensor input, ["c10::BFloat16", ""]
inline constexpr const char* kTotalAllocated = "Total Allocated";
// A [memory] event's other args: its own size (+ allocated, - freed), the reserved total, the block, the device.
inline constexpr const char* kMemBytes = "Bytes";
inline constexpr const char* kTotalReserved = "Total Reserved";
inline constexpr const char* kAddr = "Addr";
inline constexpr const char* kDeviceId = "Device Id";
inline constexpr const char* kMetaName = "name";  // args.name of process_name / thread_name

// Categories.
inline constexpr const char* kCatKernel = "kernel";
inline constexpr const char* kCatMemcpy = "gpu_memcpy";
inline constexpr const char* kCatMemset = "gpu_memset";
inline constexpr const char* kCatCudaSync = "cuda_sync";
inline constexpr const char* kCatMtiaCcp = "mtia_ccp_events";
inline constexpr const char* kCatGpuUserAnnotation = "gpu_user_annotation";
inline constexpr const char* kCatCudaRuntime = "cuda_runtime";
inline constexpr const char* kCatCudaDriver = "cuda_driver";

// Names.
inline constexpr const char* kRecordParamComms = "record_param_comms";
inline constexpr const char* kProfilerStepPrefix = "ProfilerStep";
inline constexpr const char* kMemoryEvent = "[memory]";
inline constexpr const char* kProcessName = "process_name";
inline constexpr const char* kThreadName = "thread_name";

inline constexpr int kDeviceTypeCuda = 1;

// What the importer adds to a rank's metadata: the FSDP units its labels name, by unit number.
inline constexpr const char* kFsdpUnits = "fsdp_units";

}  // namespace shardscope::kineto_keys
