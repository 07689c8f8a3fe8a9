#include "training/fsdp/memory.h"

#include <malloc.h>

#include <algorithm>

#include "tracer/format/keys.h"
#include "tracer/tracer.h"

namespace shardscope::train {
namespace {
constexpr const char* kCounter[] = {keys::kMemoryShardedParams, keys::kMemoryUnshardedParams, keys::kMemoryGradients,
                                    keys::kMemoryOptimizerState, keys::kMemoryActivations};
}

void MemoryLedger::add(Mem m, int64_t delta) {
  size_t i = size_t(m);
  now_[i] += delta;
  peak_[i] = std::max(peak_[i], now_[i]);
  tracer::counter(kCounter[i], now_[i]);
}

void MemoryLedger::sample_allocator() {
  struct mallinfo2 mi = mallinfo2();
  tracer::counter(keys::kMemoryAllocatorTotal, int64_t(mi.uordblks + mi.hblkhd));
}

}  // namespace shardscope::train
