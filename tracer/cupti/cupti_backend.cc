// The CUPTI side of GPU tracing: the device check, enabling activity kinds, the buffer callbacks, flushing
// on the tracer's cadence, and falling back to host-only tracing on any error. Turning records into events
// is record_processor.cc's job.
#include "tracer/cupti/cupti_backend.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include <cupti.h>

#include "tracer/cupti/activity_buffer.h"
#include "tracer/cupti/buffer_pool.h"
#include "tracer/cupti/device_check.h"
#include "tracer/cupti/external_id.h"
#include "tracer/cupti/gpu_clock.h"
#include "tracer/cupti/record_processor.h"
#include "tracer/format/keys.h"

namespace shardscope::tracer::cupti {
namespace {

using json = nlohmann::json;

constexpr int64_t kRecalibrateEveryNs = 1'000'000'000;

struct Kind {
  CUpti_ActivityKind kind;
  const char* name;
};
// CONCURRENT_KERNEL, never KERNEL (which serializes kernels). DRIVER brings cuLaunchKernelEx, how NCCL
// launches; MARKER/MARKER_DATA the NVTX ranges (NCCL's included) reaching CUPTI through NVTX_INJECTION64_PATH.
constexpr Kind kKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "CUPTI_ACTIVITY_KIND_MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "CUPTI_ACTIVITY_KIND_MEMSET"},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "CUPTI_ACTIVITY_KIND_RUNTIME"},
    {CUPTI_ACTIVITY_KIND_DRIVER, "CUPTI_ACTIVITY_KIND_DRIVER"},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"},
    {CUPTI_ACTIVITY_KIND_MARKER, "CUPTI_ACTIVITY_KIND_MARKER"},
    {CUPTI_ACTIVITY_KIND_MARKER_DATA, "CUPTI_ACTIVITY_KIND_MARKER_DATA"},
    {CUPTI_ACTIVITY_KIND_MEMORY2, "CUPTI_ACTIVITY_KIND_MEMORY2"},
    {CUPTI_ACTIVITY_KIND_OVERHEAD, "CUPTI_ACTIVITY_KIND_OVERHEAD"},
    {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION"},
};

std::string result_name(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) return "unknown CUPTI result";
  return s;
}

struct Backend {
  Backend(const GpuOptions& o, int rank)
      : opts(o),
        pool(o.buffer_bytes, o.max_buffers),
        processor({.pid = rank, .default_domain_markers = o.default_domain_markers, .schemas = cupti_schema_source()},
                  [](const std::string& name) { return tracer::track(name); }) {}

  GpuOptions opts;
  BufferPool pool;
  std::mutex proc_mu;  // the processor and `active`; held across cuptiActivityFlushAll, never taken by callbacks
  RecordProcessor processor;
  bool active = false;
  std::vector<const Kind*> enabled;
  CUpti_SubscriberHandle subscriber = nullptr;
  int64_t calibrated_at = 0;
  std::mutex queue_mu;  // completed buffers; taken by CUPTI's callback thread
  std::vector<std::pair<uint8_t*, size_t>> completed;
  std::atomic<uint64_t> dropped{0};
  int (*mem_get_info)(size_t* free, size_t* total) = nullptr;  // cuMemGetInfo_v2 (sample_device_memory)
};

// Leaked on purpose (CUPTI may call back during exit, after static destructors); replaced after a fork.
std::atomic<Backend*> g_backend{nullptr};
std::mutex g_start_mu;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  Backend* b = g_backend.load();
  *max_records = 0;
  // Returning no buffer is allowed from CUPTI API version 27 (CUDA 12.9) on; older versions crashed
  // (kineto PR #1534). This build's headers are 13.0, and libcupti must be at least as new.
  *buffer = b ? b->pool.acquire() : nullptr;
  *size = *buffer ? b->pool.buffer_bytes() : 0;
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  Backend* b = g_backend.load();
  if (!b || !buffer) return;
  {
    std::lock_guard<std::mutex> lock(b->queue_mu);
    b->completed.emplace_back(buffer, valid);
  }
  // Outside our lock: CUPTI's own lock is held around this callback (Kineto's ABBA deadlock note).
  size_t n = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &n) == CUPTI_SUCCESS) b->dropped += n;
}

void say(const std::string& line) { std::fprintf(stderr, "shardscope tracer: %s\n", line.c_str()); }

void write_status(const json& status) { tracer::metadata({{keys::kGpuTracing, status}}); }

void host_only(const std::string& reason) {
  say(reason + "; GPU tracing off, host tracing only");
  write_status({{keys::kGpuBackend, keys::kGpuBackendNone}, {keys::kGpuReason, reason}});
}

// Undoes what enable() did so far; CUPTI errors on the way out are ignored (we are leaving it).
void teardown_locked(Backend* b) {
  detail::set_external_ids_on(false);
  for (const Kind* k : b->enabled) cuptiActivityDisable(k->kind);
  b->enabled.clear();
  if (b->subscriber) cuptiUnsubscribe(b->subscriber);
  b->subscriber = nullptr;
  b->active = false;
  tracer::detail::set_backend_hooks({});
}

void fail_locked(Backend* b, const std::string& call, CUptiResult r) {
  teardown_locked(b);
  host_only("CUPTI error: " + call + " returned " + std::to_string(int(r)) + " (" + result_name(r) + ")");
}

void calibrate_locked(Backend* b, bool write) {
  ClockFit fit = calibrate([] {
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
  });
  b->processor.set_clock_offset(fit.offset_ns);
  b->calibrated_at = now_ns();
  if (write) write_status({{keys::kGpuClockOffsetNs, fit.offset_ns}, {keys::kGpuClockBracketNs, fit.bracket_ns}});
}

// Reads every completed buffer into the processor and hands the events to the tracer.
void drain_locked(Backend* b) {
  std::vector<std::pair<uint8_t*, size_t>> buffers;
  {
    std::lock_guard<std::mutex> lock(b->queue_mu);
    buffers.swap(b->completed);
  }
  if (now_ns() - b->calibrated_at >= kRecalibrateEveryNs) calibrate_locked(b, false);
  std::vector<const CUpti_Activity*> records;
  for (auto [buffer, valid] : buffers)
    if (std::string error = read_buffer(buffer, valid, records); !error.empty())
      say("CUPTI error: " + error + "; the rest of that buffer is skipped");
  b->processor.process(records);
  b->processor.add_dropped(b->dropped.exchange(0));
  tracer::emit(b->processor.take());
  for (auto [buffer, valid] : buffers) b->pool.release(buffer);
}

void on_flush() {
  Backend* b = g_backend.load();
  if (!b) return;
  std::lock_guard<std::mutex> lock(b->proc_mu);
  if (!b->active) return;
  // Not forced: only buffers CUPTI has completed, so this never waits on in-flight GPU work.
  if (CUptiResult r = cuptiActivityFlushAll(0); r != CUPTI_SUCCESS) {
    drain_locked(b);
    fail_locked(b, "cuptiActivityFlushAll(0)", r);
    return;
  }
  drain_locked(b);
}

void before_stop() {
  Backend* b = g_backend.load();
  if (!b) return;
  std::lock_guard<std::mutex> lock(b->proc_mu);
  if (!b->active) return;
  for (const Kind* k : b->enabled) cuptiActivityDisable(k->kind);
  b->enabled.clear();
  CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  drain_locked(b);
  if (r != CUPTI_SUCCESS)
    say("CUPTI error: cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) returned " + std::to_string(int(r)) +
        " (" + result_name(r) + "); GPU records still in CUPTI's buffers are lost");
  bool finalize = b->opts.finalize_at_stop;
  teardown_locked(b);
  if (finalize) cuptiFinalize();
}

// The device's used memory as a cudaMalloc or cudaFree returns, from the calling thread, whose current
// device the call used: the moments it moves, so the highest sample is the peak. Beside the MEMORY2 records'
// running totals (record_processor.h), the part outside the program's allocator.
void on_runtime_exit(const CUpti_CallbackData& cb) {
  Backend* b = g_backend.load();
  size_t free = 0, total = 0;
  if (!b || !b->mem_get_info || cb.callbackSite != CUPTI_API_EXIT || b->mem_get_info(&free, &total) != 0 ||
      free > total)
    return;
  tracer::counter(keys::kMemoryAllocatorTotal, int64_t(total - free));
}

// On the thread destroying a context: hand CUPTI's buffers over now (they are queued, and read at the next
// flush); takes none of our locks but the queue's, as the buffer callback does. On the thread that called
// cudaMalloc or cudaFree: the memory sample (the tracer's thread buffer only).
void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && data)
    on_runtime_exit(*static_cast<const CUpti_CallbackData*>(data));
}

void after_fork_in_child() {
  // CUDA is unusable in a child forked after cuInit, and the parent's buffers and locks are not ours.
  g_backend.store(nullptr);
  detail::set_external_ids_on(false);
}

bool enable_after_check(const DeviceCheck& device, const GpuOptions& gpu, const std::string& nvtx) {
  if (!tracer::running()) return false;
  if (!device.ok) {
    host_only(device.reason);
    return false;
  }
  std::lock_guard<std::mutex> start_lock(g_start_mu);
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, after_fork_in_child); });
  if (Backend* old = g_backend.load()) {
    std::lock_guard<std::mutex> lock(old->proc_mu);
    if (old->active) return true;
  }
  auto* b = new Backend(gpu, 0);  // pid 0: tracer::emit() puts the session's rank in every event
  std::lock_guard<std::mutex> lock(b->proc_mu);
  g_backend.store(b);  // the old one, if any, is leaked: CUPTI may still hold its buffers

  uint32_t version = 0;
  if (CUptiResult r = cuptiGetVersion(&version); r != CUPTI_SUCCESS) {
    fail_locked(b, "cuptiGetVersion", r);
    return false;
  }
  // Claim CUPTI: a second subscriber (nsys, ncu, torch.profiler's Kineto) would take our buffers over.
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 2] = {};
  CUpti_SubscriberParams params{CUpti_SubscriberParams_STRUCT_SIZE, "shardscope", holder, sizeof holder};
  CUptiResult r = cuptiSubscribe_v2(&b->subscriber, on_callback, nullptr, &params);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    b->subscriber = nullptr;
    teardown_locked(b);
    host_only(std::string("CUPTI is already held by ") + (holder[0] ? holder : "another tool") +
              " (one CUPTI subscriber per process: Nsight Systems, Nsight Compute, torch.profiler); refusing");
    return false;
  }
  if (r != CUPTI_SUCCESS) {
    b->subscriber = nullptr;
    fail_locked(b, "cuptiSubscribe_v2", r);
    return false;
  }
  // A context about to be destroyed (cudaDeviceReset, process teardown) takes its unflushed records along.
  if (r = cuptiEnableCallback(1, b->subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
      r != CUPTI_SUCCESS) {
    fail_locked(b, "cuptiEnableCallback(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)", r);
    return false;
  }
  // gettid() in API and marker records, matching the host tracer's os_tid; must precede the callbacks.
  if (r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM); r != CUPTI_SUCCESS) {
    fail_locked(b, "cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)", r);
    return false;
  }
  if (r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed); r != CUPTI_SUCCESS) {
    fail_locked(b, "cuptiActivityRegisterCallbacks", r);
    return false;
  }
  for (const Kind& k : kKinds) {
    bool marker = k.kind == CUPTI_ACTIVITY_KIND_MARKER || k.kind == CUPTI_ACTIVITY_KIND_MARKER_DATA;
    if (marker && !gpu.nvtx) continue;
    if (r = cuptiActivityEnable(k.kind); r != CUPTI_SUCCESS) {
      fail_locked(b, std::string("cuptiActivityEnable(") + k.name + ")", r);
      return false;
    }
    b->enabled.push_back(&k);
  }
  if (gpu.sample_device_memory) {
    // Loaded already (the device check, or the driver calling us from cuInit): no new dependency.
    if (void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD))
      b->mem_get_info = reinterpret_cast<int (*)(size_t*, size_t*)>(dlsym(cuda, "cuMemGetInfo_v2"));
    // Each allocation record then names the library that asked (PyTorch's caching allocator: libc10_cuda).
    // Without it the traces still hold the device's use, not split.
    if (r = cuptiActivityEnableAllocationSource(1); r != CUPTI_SUCCESS)
      say("CUPTI error: cuptiActivityEnableAllocationSource returned " + std::to_string(int(r)) + " (" +
          result_name(r) + "); the caching allocator's reserve is not told apart");
    cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuMemGetInfo_v2, 0);  // our own samples' calls
    for (CUpti_CallbackId id : {CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020})
      if (r = cuptiEnableCallback(1, b->subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id); r != CUPTI_SUCCESS) {
        fail_locked(b, "cuptiEnableCallback(CUPTI_CB_DOMAIN_RUNTIME_API)", r);
        return false;
      }
  }
  // Calls made thousands of times a step that say nothing about the GPU's timeline (as Kineto filters them).
  cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 0);
  cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 0);
  cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState, 0);
  cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute, 0);
  // Completion polls: a thread waiting on a stream or event (the trainer's NCCL wait, PyTorch's work.wait)
  // calls these every few microseconds; recorded, they would flood the trace and the buffer pool.
  cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020, 0);
  cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, 0);
  cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuStreamQuery, 0);
  cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuEventQuery, 0);
  b->active = true;
  detail::set_external_ids_on(true);  // EXTERNAL_CORRELATION is among the kinds just enabled
  json status = {{keys::kGpuBackend, keys::kGpuBackendCupti},
                 {keys::kCuptiVersion, version},
                 {keys::kGpuDevices, device.devices},
                 {keys::kGpuReason, device.reason},
                 {keys::kNvtxInjection, nvtx}};
  write_status(status);
  calibrate_locked(b, true);
  tracer::detail::set_backend_hooks({.on_flush = on_flush, .before_stop = before_stop});
  say("GPU tracing on: CUPTI " + std::to_string(version) + ", " + device.reason);
  return true;
}

}  // namespace

std::string point_nvtx_at_cupti() {
  if (const char* set = std::getenv("NVTX_INJECTION64_PATH"); set && *set) return set;
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) || !info.dli_fname) return "";
  std::error_code ec;
  std::string path = std::filesystem::canonical(info.dli_fname, ec).string();
  if (ec) path = info.dli_fname;
  setenv("NVTX_INJECTION64_PATH", path.c_str(), 0);
  return path;
}

bool enable(const GpuOptions& gpu) {
  DeviceCheck device = gpu.check_device ? check_device() : DeviceCheck{true, 0, "inside cuInit"};
  std::string nvtx = device.ok && gpu.nvtx ? point_nvtx_at_cupti() : "";
  return enable_after_check(device, gpu, nvtx);
}

bool start(const Options& options, const GpuOptions& gpu) {
  // The device check and NVTX_INJECTION64_PATH come first: the host session's first Range makes this
  // module's first NVTX call, after which NVTX never looks for a tool again.
  DeviceCheck device = gpu.check_device ? check_device() : DeviceCheck{true, 0, "inside cuInit"};
  std::string nvtx = device.ok && gpu.nvtx ? point_nvtx_at_cupti() : "";
  tracer::start(options);
  return enable_after_check(device, gpu, nvtx);
}

bool active() {
  Backend* b = g_backend.load();
  if (!b) return false;
  std::lock_guard<std::mutex> lock(b->proc_mu);
  return b->active;
}

}  // namespace shardscope::tracer::cupti
