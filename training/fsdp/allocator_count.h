// The CPU allocator's own count of the bytes it hands out, by the ZeRO category of the code that asked for
// them: a second measurement of what MemoryLedger tallies from element counts. Tests switch it on
// (SHARDSCOPE_TRAIN_COUNT_ALLOCATIONS=1, CPU runs only); it wraps c10's CPU allocator, so every CPU tensor's
// storage allocated afterwards goes through it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "training/fsdp/memory.h"

namespace shardscope::train {

// One slot per Mem category, and a last one for bytes allocated under no category.
constexpr std::size_t kUntagged = std::size_t(Mem::kCount);
using AllocatorBytes = std::array<int64_t, kUntagged + 1>;

// Wraps c10's CPU allocator (once; later calls do nothing). Each storage is counted at the size the heap
// holds for it (malloc_usable_size: glibc's chunk, or AddressSanitizer's allocation), from its allocation
// to its free, in the category tagged on the allocating thread then.
void count_cpu_allocations();
bool counting_cpu_allocations();

// Storages allocated on this thread while it lives are counted in `m`.
class AllocationTag {
 public:
  explicit AllocationTag(Mem m);
  ~AllocationTag();
  AllocationTag(const AllocationTag&) = delete;
  AllocationTag& operator=(const AllocationTag&) = delete;

 private:
  std::size_t previous_;
};

// Live bytes per category now, and the most since the last reset_allocator_peaks().
AllocatorBytes allocator_bytes();
AllocatorBytes allocator_peaks();
void reset_allocator_peaks();

}  // namespace shardscope::train
