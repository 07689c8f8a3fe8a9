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

// Fixed values.
inline constexpr const char* kClockMonotonic = "CLOCK_MONOTONIC";
inline constexpr const char* kUnitNs = "ns";
inline constexpr int kSchemaVersionValue = 1;

}  // namespace shardscope::keys
