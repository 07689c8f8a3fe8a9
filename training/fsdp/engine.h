// The FSDP runtime: the units, the communicators and streams, and one training step's forward and backward
// with FSDP's all-gather, free, prefetch and gradient-reduction schedule.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "training/comm/comm_stream.h"
#include "training/comm/group.h"
#include "training/comm/rendezvous.h"
#include "training/fsdp/memory.h"
#include "training/fsdp/options.h"
#include "training/fsdp/unit.h"
#include "sizing/presets.h"

namespace shardscope::train {

// A communicator over `members` on the run's backend (NCCL for --device cuda, else Gloo), with the run's
// collective deadline. Every member must call it with the same name.
std::unique_ptr<Group> make_backend_group(Rendezvous& rv, const FsdpOptions& opts, const std::string& name,
                                          const std::vector<int>& members);

class Engine {
 public:
  // Throws std::invalid_argument for an impossible layout (e.g. a world that ranks_per_node does not divide).
  Engine(const sizing::ModelConfig& model, const FsdpOptions& opts, Rendezvous& rv, uint64_t seed, MemoryLedger& mem);
  ~Engine();

  // Forward and backward on this rank's batch; gradients are reduced and ready when it returns.
  // Returns the loss averaged over all ranks.
  double forward_backward(const torch::Tensor& tokens, const torch::Tensor& targets);
  // Global L2 norm of the gradient; scales gradients so it is at most max_norm (no-op when max_norm <= 0).
  double clip_grad_norm(double max_norm);
  std::vector<std::unique_ptr<Unit>>& units() { return units_; }
  void after_optimizer();
  // Returns once every rank has called it.
  void barrier();
  // Every unit's full fp32 parameters, concatenated (collective; all ranks must call it).
  torch::Tensor full_parameters();
  int shard_size() const { return shard_size_; }
  int shard_rank() const { return shard_rank_; }
  const FsdpOptions& options() const { return opts_; }

 private:
  void unshard(Unit& u, const char* reason);
  void wait_unshard(Unit& u);
  torch::Tensor run_block(Unit& u, const torch::Tensor& x);
  int next_in_forward(int unit) const;
  // The planted straggler (FsdpOptions::slow_rank): its sleep, after the others' word when `after_peers`;
  // and the others' word that a unit's backward compute is done.
  void planted_delay(int unit, bool after_peers);
  void backward_done(int unit);

  sizing::ModelConfig model_;
  FsdpOptions opts_;
  Rendezvous& rv_;
  MemoryLedger& mem_;
  int shard_rank_ = 0, shard_size_ = 1, replicas_ = 1;
  std::unique_ptr<Group> shard_ag_, shard_rs_, replica_rs_, world_rs_, world_main_;
  std::vector<std::unique_ptr<Unit>> units_;  // [0] root, [1..L] blocks
  std::vector<Unit*> in_flight_;              // all-gathers issued, not yet consumed (the rate limiter)
  std::vector<int> exec_order_;               // block units in forward order, recorded on the first step
  int64_t passes_ = 0;                        // forward_backward calls: the planted straggler's store keys
  // Declared after the groups and units, so destroyed before them: when a step fails, the streams drop
  // what is queued and finish the collective in progress while its groups and buffers still exist.
  std::unique_ptr<CommStream> ag_stream_, rs_stream_;
  Comms comms_{};
};

}  // namespace shardscope::train
