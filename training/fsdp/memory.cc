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

#include "tracer/format/keys.h"
#include "tracer/tracer.h"

namespace shardscope::train {
namespace {
constexpr const char* kCounter[] = {keys::kMemoryShardedParams, keys::kMemoryUnshardedParams, keys::kMemoryGradients,
                                    keys::kMemoryOptimizerState, keys::kMemoryActivations, keys::kMemoryHostOffloaded};
static_assert(std::size(kCounter) == size_t(Mem::kCount), "one counter per category");
}

void retain_freed_host_memory() {
  mallopt(M_MMAP_MAX, 0);                     // large blocks from the heap too, where free keeps them
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
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) == cudaSuccess) tracer::counter(keys::kMemoryAllocatorTotal, int64_t(total - free));
    return;
  }
#endif
  struct mallinfo2 mi = mallinfo2();
  tracer::counter(keys::kMemoryAllocatorTotal, int64_t(mi.uordblks + mi.hblkhd));
}

int64_t MemoryLedger::device_in_use() const {
#if SHARDSCOPE_TORCH_CUDA
  if (on_gpu_) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device_);
    return stats.allocated_bytes[0].current;  // StatType::AGGREGATE, 0 in 1.13 and 2.x (where StatType moved)
  }
#endif
  struct mallinfo2 mi = mallinfo2();  // every arena: the comm threads' allocations count too
  return int64_t(mi.uordblks + mi.hblkhd);
}

}  // namespace shardscope::train
