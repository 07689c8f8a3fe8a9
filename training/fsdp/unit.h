// One FSDP unit: its parameters flattened into one flat parameter, padded to a multiple of the sharding
// group size and sharded evenly; the all-gather before use, the free after, the gradient reduction.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <vector>

#include "training/comm/comm_stream.h"
#include "training/comm/group.h"
#include "training/fsdp/memory.h"
#include "training/fsdp/options.h"
#include "sizing/presets.h"
#include "training/model/transformer.h"

namespace shardscope::train {

struct Comms {
  Group* shard_ag;    // sharding group, used on the all-gather stream
  Group* shard_rs;    // sharding group, used on the reduce-scatter stream
  Group* replica_rs;  // hybrid_shard: the same shard index on every node (nullptr otherwise)
  Group* world_rs;    // no_shard / zero1: gradient all-reduce over the world
  CommStream* ag_stream;
  CommStream* rs_stream;
};

class Unit {
 public:
  Unit(sizing::UnitLayout layout, const FsdpOptions& opts, int shard_rank, int shard_size, int world_size,
       const torch::Tensor& full_init, MemoryLedger& mem);

  const sizing::UnitLayout& layout() const { return layout_; }
  int id() const { return layout_.id; }
  int64_t padded_numel() const { return padded_; }
  int64_t shard_numel() const { return shard_numel_; }
  bool params_sharded() const { return params_sharded_; }
  // Where compute and collectives run (the optimizer's tensors are on the host under --cpu-offload).
  torch::Device device() const { return device_; }

  // Issues the all-gather of the full flat parameter on the all-gather stream (no-op when already gathered
  // or in flight); `reason` goes into the trace.
  void unshard(const Comms& c, const char* reason);
  bool gathered() const { return gathered_; }
  bool in_flight() const { return gather_.has_value(); }
  // Blocks until the all-gather ran; then views() may be used.
  void wait_unshard();
  // Frees the full flat parameter (storage resized to zero: autograd's saved views see the re-gathered
  // data after the next unshard).
  void reshard();
  // Views of the flat parameter (an autograd leaf over the full storage), one per parameter.
  ParamViews views();
  // Starts a step: a new flat-parameter leaf, so no gradient or graph carries over.
  void begin_step();

  // After backward: reduces the flat gradient across the group on the reduce-scatter stream into this
  // rank's gradient (averaged over `world_size` ranks) and drops the flat gradient.
  void reduce_grad(const Comms& c);
  // Finishes a reduction that has run (scales it into this rank's gradient, frees its buffers); with
  // block=false does nothing when it has not run yet.
  void reap_reduce(bool block);
  void wait_reduce();

  // This rank's fp32 master weights, gradient and AdamW moments (all the same length).
  torch::Tensor& master() { return master_; }
  torch::Tensor grad_for_optimizer();
  torch::Tensor& exp_avg() { return exp_avg_; }
  torch::Tensor& exp_avg_sq() { return exp_avg_sq_; }
  // After the optimizer: refreshes the persistent full parameters (no_shard bf16, zero1) from the master.
  void after_optimizer(const Comms& c);
  // The full unpadded fp32 parameters, gathered (collective over the sharding group).
  torch::Tensor gather_master(Group& g);

 private:
  sizing::UnitLayout layout_;
  FsdpOptions opts_;
  int shard_rank_, shard_size_, world_size_;
  torch::Device device_ = torch::kCPU;
  int64_t padded_, shard_numel_;
  bool params_sharded_;  // full parameters exist only between unshard and reshard
  bool grads_sharded_;
  MemoryLedger& mem_;
  Mem state_mem(Mem m) const { return opts_.cpu_offload ? Mem::HostOffloaded : m; }

  torch::Tensor master_;  // fp32 [shard_numel] (no_shard: [padded])
  torch::Tensor full_;    // param dtype [padded], the all-gather destination (may alias master_)
  torch::Tensor flat_;    // full_.detach() as a leaf requiring grad; its .grad() is the flat gradient
  bool gathered_ = false;
  torch::Tensor grad_;  // fp32: [shard_numel] when sharded, [padded] otherwise
  torch::Tensor exp_avg_, exp_avg_sq_;
  std::optional<Work> gather_, reduce_;
  torch::Tensor gather_send_;             // the shard being sent, until the all-gather ran
  torch::Tensor reduce_input_, reduced_;  // the reduction's input and where its sum lands, until reaped
};

}  // namespace shardscope::train
