#include "training/fsdp/memory.h"

#include <malloc.h>

#if SHARDSCOPE_TRAIN_NCCL
#include <cuda_runtime_api.h>
#endif
#if SHARDSCOPE_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include <algorithm>
#include <limits>

// Under AddressSanitizer (scripts/sanitize) malloc is the sanitizer's, and glibc's mallinfo2 sees none of it.
#if defined(__SANITIZE_ADDRESS__)
#define SHARDSCOPE_ASAN_HEAP 1
// The sanitizers' public allocator interface (sanitizer/allocator_interface.h, which gcc does not install).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

#include "tracer/format/keys.h"
#include "tracer/tracer.h"

namespace shardscope::train {
namespace {

// Bytes the host heap holds in use, every thread's (the comm threads' allocations count too).
int64_t host_heap_in_use() {
#if SHARDSCOPE_ASAN_HEAP
  return int64_t(__sanitizer_get_current_allocated_bytes());
#else
  struct mallinfo2 mi = mallinfo2();
  return int64_t(mi.uordblks + mi.hblkhd);
#endif
}

constexpr const char* kCounter[] = {keys::kMemoryShardedParams, keys::kMemoryUnshardedParams,
                                    keys::kMemoryGradients,     keys::kMemoryOptimizerState,
                                    keys::kMemoryActivations,   keys::kMemoryHostOffloaded};
static_assert(std::size(kCounter) == size_t(Mem::kCount), "one counter per category");
}  // namespace

void retain_freed_host_memory() {
  mallopt(M_MMAP_MAX, 0);                                      // large blocks from the heap too, where free keeps them
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());  // never give the heap's top back
}

void MemoryLedger::add(Mem m, int64_t delta) {
  size_t i = size_t(m);
  now_[i] += delta;
  peak_[i] = std::max(peak_[i], now_[i]);
  tracer::counter(kCounter[i], now_[i]);
}

void MemoryLedger::sample_allocator() {
#if SHARDSCOPE_TRAIN_NCCL
  if (on_gpu_) {  // the device's used memory: the caching allocator's reserve and everything else on it
#if SHARDSCOPE_TORCH_CUDA
    // Before the total: a report reads each counter's last sample at or before the total's, so the three
    // are one sample only in this order.
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device_);
    tracer::counter(keys::kMemoryAllocatorReserved, int64_t(stats.reserved_bytes[0].current));
    tracer::counter(keys::kMemoryAllocatorAllocated, int64_t(stats.allocated_bytes[0].current));
#endif
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) == cudaSuccess)
      tracer::counter(keys::kMemoryAllocatorTotal, int64_t(total - free));
    return;
  }
#endif
  tracer::counter(keys::kMemoryAllocatorTotal, host_heap_in_use());
}

int64_t MemoryLedger::device_in_use() const {
#if SHARDSCOPE_TORCH_CUDA
  if (on_gpu_) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device_);
    return stats.allocated_bytes[0].current;  // StatType::AGGREGATE, 0 in 1.13 and 2.x (where StatType moved)
  }
#endif
  return host_heap_in_use();
}

}  // namespace shardscope::train
