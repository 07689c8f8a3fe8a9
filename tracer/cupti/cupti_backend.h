// GPU tracing through CUPTI's activity API, feeding the running host session (tracer/tracer.h): kernels,
// memcpy, memset, CUDA runtime and driver calls, synchronization, NVTX markers, device memory, CUPTI's
// overhead. Records are read on the tracer's flush cadence and at stop; see record_processor.h for what
// becomes of them.
//
//   shardscope::tracer::cupti::start({.path = "trace.rank0.json.gz", .rank = 0});  // host + GPU
//   ...
//   shardscope::tracer::stop();  // final CUPTI flush, then the file is closed (also at exit)
//
// Nothing here throws into, aborts or hangs the traced program: no device, or any CUPTI error, leaves the
// host tracer running alone, with one line on stderr naming the reason (the failing call and its code).
#pragma once

#include <cstddef>
#include <string>

#include "tracer/tracer.h"

namespace shardscope::tracer::cupti {

struct GpuOptions {
  // NVTX capture through CUPTI (MARKER, MARKER_DATA, and NVTX_INJECTION64_PATH). It labels NCCL's Generic
  // kernels and shows NVTX ranges of other libraries, but every NVTX call, each Range's included, then goes
  // through CUPTI: turn it off when Range cost matters more.
  bool nvtx = true;
  // NVTX ranges of the default domain (see ProcessorOptions): off when the program's own Ranges are NVTX.
  bool default_domain_markers = false;
  size_t buffer_bytes = 4 << 20;  // CUPTI recommends 1-10 MB
  size_t max_buffers = 32;        // at most 128 MiB of buffers; beyond, CUPTI drops and counts
  // Ask the driver for a device first. Off only inside cuInit (the injection library), which must not be
  // re-entered and which proves the driver is there.
  bool check_device = true;
  // cuptiFinalize at stop, so CUPTI's instrumentation stops costing (pytorch#144455). Off at process exit.
  bool finalize_at_stop = true;
  // The device's used memory (memory.allocator_total) sampled as each cudaMalloc and cudaFree returns, and the
  // library that asked for each allocation, so that PyTorch's caching allocator's reserve is counted apart
  // (memory.allocator_reserved, record_processor.h): for a program that samples no memory itself (the
  // injection library's); shardscope-train samples its own.
  bool sample_device_memory = false;
};

// Starts the host tracer (tracer::start, which may throw as it does) and, where a CUDA device is present,
// CUPTI tracing into it. Points NVTX_INJECTION64_PATH at the libcupti in use before the first Range, so NVTX
// ranges of modules that have not made an NVTX call yet reach CUPTI. True when GPU tracing is on.
bool start(const Options& options, const GpuOptions& gpu = {});

// Turns CUPTI tracing on in an already running host session. True when GPU tracing is on.
bool enable(const GpuOptions& gpu = {});

// Sets NVTX_INJECTION64_PATH to the libcupti file this library uses (found with dladdr), unless it is set
// already (e.g. by Nsight Systems). Returns the value in effect.
std::string point_nvtx_at_cupti();

// Whether CUPTI tracing is on now.
bool active();

}  // namespace shardscope::tracer::cupti
