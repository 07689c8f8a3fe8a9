// The bytes the trainer holds, by the categories of SPEC's ZeRO model, published as trace counters.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace shardscope::train {

// HostOffloaded: --cpu-offload's sharded state on the host; the other categories are on the training device.
enum class Mem { ShardedParams, UnshardedParams, Gradients, OptimizerState, Activations, HostOffloaded, kCount };

// Makes glibc keep freed memory in the process instead of returning it to the kernel: the host's
// counterpart of the CUDA caching allocator. Without it every re-gathered flat parameter (freed after use,
// allocated again next step) faults in fresh zeroed pages inside its all-gather, which halved the block
// all-gather bandwidth under shard_grad_op (scripts/bench-trainer). Costs resident memory: the process
// keeps its peak, as a GPU process keeps its reserved memory.
void retain_freed_host_memory();

class MemoryLedger {
 public:
  void add(Mem m, int64_t delta);
  int64_t bytes(Mem m) const { return now_[std::size_t(m)]; }
  int64_t peak(Mem m) const { return peak_[std::size_t(m)]; }
  void reset_peaks() { peak_ = now_; }
  // Emits the allocator's total as a counter: glibc's in-use bytes on CPU, the device's used bytes on a GPU.
  void sample_allocator();
  // Bytes allocated on the training device right now (glibc's in-use heap, or the CUDA caching allocator's
  // allocated bytes): the difference across a block's forward is what the block keeps for backward.
  int64_t device_in_use() const;
  void set_gpu(bool on, int device = 0) { on_gpu_ = on, device_ = device; }

 private:
  std::array<int64_t, std::size_t(Mem::kCount)> now_{}, peak_{};
  bool on_gpu_ = false;
  int device_ = 0;
};

}  // namespace shardscope::train
