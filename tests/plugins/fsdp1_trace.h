// A PyTorch-profiler (Kineto) trace of one FSDP1 training step, generated in Kineto's shape: a root unit
// wrapping three blocks, CPU ranges with FSDP1's record_function labels exactly as PyTorch 2.x emits them
// (torch/distributed/fsdp/_runtime_utils.py: "FullyShardedDataParallel._root_pre_forward", "._pre_forward",
// "._post_forward", "._pre_backward_hook", "._pre_backward_prefetch", "._post_backward_hook",
// "._post_backward_prefetch", "FullyShardedDataParallel.rate_limiter"; fully_sharded_data_parallel.py:
// "FullyShardedDataParallel.forward"), cudaLaunchKernel calls and the kernels they launch. None of the
// shared real traces is an FSDP1 run, hence this fixture. Backward runs on the autograd thread, as in PyTorch.
#pragma once

#include <algorithm>
#include <map>
#include <string>

#include "tests/plugins/kineto_writer.h"

namespace shardscope::test {

struct Fsdp1TraceOptions {
  bool prefetch = true;   // BACKWARD_PRE: each pre-backward hook issues the next unit's all-gather
  int limited_unit = -1;  // the hook of this unit waits in the rate limiter (until the all-gather in
                          // flight completes) before issuing its prefetch
  int64_t backward_all_gather_us = 50;
};

class Fsdp1Trace {
 public:
  // Times in µs. The device runs a kernel 5 µs after its launch at the earliest, one at a time per stream.
  std::string build(const Fsdp1TraceOptions& o) {
    cpu(kMain, "ProfilerStep#1", 0, 100000);
    // Forward: the root's forward encloses the blocks'; each unit gathers its own parameters.
    cpu(kMain, "FullyShardedDataParallel.forward", 5, 800);
    cpu(kMain, "FullyShardedDataParallel._root_pre_forward", 6, 2);
    cpu(kMain, "FullyShardedDataParallel._pre_forward", 9, 5);
    gather(0, 10);
    compute(0, 15, 1);
    for (int u = 1; u <= 3; ++u) {
      int64_t c = 100 + 200 * (u - 1);
      cpu(kMain, "FullyShardedDataParallel.forward", c, 150);
      cpu(kMain, "FullyShardedDataParallel._root_pre_forward", c + 1, 1);
      cpu(kMain, "FullyShardedDataParallel._pre_forward", c + 3, 5);
      gather(u, c + 4);
      compute(u, c + 10, 3);
      cpu(kMain, "FullyShardedDataParallel._post_forward", c + 140, 5);
    }
    compute(0, 700, 1);  // the head
    cpu(kMain, "FullyShardedDataParallel._post_forward", 790, 10);

    // Backward, on the autograd thread: root first (its output's hook fires first), then blocks 3, 2, 1.
    // The hooks run there, and so do the launches of the all-gathers they issue and of the unit's backward.
    ag_us_ = o.backward_all_gather_us;
    launch_tid_ = kAutograd;
    int64_t c = 1000;
    const int order[] = {0, 3, 2, 1};
    for (int k = 0; k < 4; ++k, c += 400) {
      int u = order[k], next = k + 1 < 4 ? order[k + 1] : -1;
      int64_t t = c + 1;
      if (u != 0 && !o.prefetch) gather(u, t);  // its own all-gather, in its own hook
      t += 2;
      int64_t prefetch_start = t;
      if (u == o.limited_unit) {
        // The limiter blocks the issue until the all-gather in flight (this unit's own) completes.
        int64_t until = std::max(t + 1, ag_end_[u] + 1);
        cpu(kAutograd, "FullyShardedDataParallel.rate_limiter", t, until - t);
        t = until;
      }
      if (o.prefetch && next > 0) gather(next, t + 1);
      t += 3;
      cpu(kAutograd, "FullyShardedDataParallel._pre_backward_prefetch", prefetch_start, t - prefetch_start);
      cpu(kAutograd, "FullyShardedDataParallel._pre_backward_hook", c, t + 1 - c);
      compute(u, t + 2, u == 0 ? 1 : 3);
      if (u != 0) post_backward(u, t + 8);
    }
    post_backward(0, c);
    return w_.file("\"schemaVersion\": 1, ", ", \"distributedInfo\": {\"rank\": 0, \"world_size\": 2}");
  }

 private:
  static constexpr int kMain = 100, kAutograd = 101, kCompute = 7, kComm = 20;

  void cpu(int tid, const std::string& name, int64_t ts, int64_t dur) { w_.cpu(tid, name, ts, dur); }
  int launch(int64_t ts) { return w_.launch(ts, launch_tid_); }
  int64_t kernel(const std::string& name, int stream, int corr, int64_t not_before, int64_t dur,
                 const std::string& extra = "") {
    return w_.kernel(name, stream, corr, not_before, dur, extra);
  }
  void gather(int unit, int64_t t) {
    ag_end_[unit] = kernel("ncclDevKernel_AllGather_RING_LL(x)", kComm, launch(t), 0, ag_us_,
                           R"(, "Collective name": "_allgather_base")");
  }
  // `n` 40 µs kernels after the unit's all-gather; returns when the last ends.
  int64_t compute(int unit, int64_t t, int n) {
    int64_t end = 0;
    for (int k = 0; k < n; ++k) end = kernel("gemm", kCompute, launch(t + k), ag_end_[unit], 40);
    return end;
  }
  void post_backward(int unit, int64_t t) {
    cpu(kAutograd, "FullyShardedDataParallel._post_backward_hook", t, 6);
    kernel("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(x)", kComm, launch(t + 1), w_.stream_free(kCompute), 30,
           R"(, "Collective name": "_reduce_scatter_base")");
    cpu(kAutograd, "FullyShardedDataParallel._post_backward_prefetch", t + 3, 2);
    (void)unit;
  }

  KinetoWriter w_;
  int64_t ag_us_ = 50;
  int launch_tid_ = kMain;
  std::map<int, int64_t> ag_end_;
};

}  // namespace shardscope::test
