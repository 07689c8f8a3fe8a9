#include "training/fsdp/engine.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <thread>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "tracer/format/keys.h"
#include "tracer/tracer.h"
#include "training/fsdp/allocator_count.h"
#include "training/model/transformer.h"

namespace shardscope::train {
namespace {

namespace tr = tracer;

torch::Tensor init_unit(const sizing::UnitLayout& u, torch::Generator& gen) {
  auto t = torch::empty({u.numel}, torch::kFloat32);
  for (const sizing::ParamSpec& p : u.params) {
    auto slice = t.narrow(0, p.offset, p.numel());
    if (p.is_norm) slice.fill_(1.0);
    else
      slice.normal_(0.0, 0.02, gen);
  }
  return t;
}

std::vector<int> range_of(int first, int count, int stride = 1) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(first + i * stride);
  return v;
}

}  // namespace

std::unique_ptr<Group> make_backend_group(Rendezvous& rv, const FsdpOptions& opts, const std::string& name,
                                          const std::vector<int>& members) {
  // On a GPU the deadline also covers peers' first-step set-up and checkpoint writes of large presets.
  const std::chrono::seconds timeout(opts.collective_timeout_s > 0 ? opts.collective_timeout_s : opts.cuda ? 300 : 30);
#if SHARDSCOPE_TRAIN_NCCL
  if (opts.cuda) return make_nccl_group(rv, name, members, timeout, opts.device);
#endif
  if (opts.cuda) throw std::invalid_argument("this build has no NCCL: --device cuda is not available");
#if SHARDSCOPE_TRAIN_GLOO
  return make_gloo_group(rv, name, members, timeout);
#else
  (void)rv, (void)name, (void)members, (void)timeout;
  throw std::invalid_argument("this build has no Gloo (libgloo-dev): --device cpu is not available");
#endif
}

Engine::Engine(const sizing::ModelConfig& model, const FsdpOptions& opts, Rendezvous& rv, uint64_t seed,
               MemoryLedger& mem)
    : model_(model), opts_(opts), rv_(rv), mem_(mem) {
  const int world = rv.env().world_size, rank = rv.env().rank;
  std::string node = "all";
  std::vector<int> shard_members = range_of(0, world);
  if (opts.sharding == Sharding::NoShard) {
    shard_members = {rank};
    node = "self" + std::to_string(rank);
  } else if (opts.sharding == Sharding::HybridShard) {
    const int rpn = opts.ranks_per_node;
    if (rpn < 1 || world % rpn != 0)
      throw std::invalid_argument("hybrid_shard needs --ranks-per-node dividing the world size " +
                                  std::to_string(world) + " (got " + std::to_string(rpn) + ")");
    shard_members = range_of(rank / rpn * rpn, rpn);
    node = "node" + std::to_string(rank / rpn);
    replicas_ = world / rpn;
  }
  shard_size_ = int(shard_members.size());
  shard_rank_ = int(std::find(shard_members.begin(), shard_members.end(), rank) - shard_members.begin());

  auto make_group = [&](const std::string& name, const std::vector<int>& members) {
    return make_backend_group(rv, opts, name, members);
  };
  shard_ag_ = make_group("shard_ag_" + node, shard_members);
  shard_rs_ = make_group("shard_rs_" + node, shard_members);
  if (opts.sharding == Sharding::HybridShard) {
    const int rpn = opts.ranks_per_node;
    replica_rs_ = make_group("replica_" + std::to_string(rank % rpn), range_of(rank % rpn, replicas_, rpn));
  }
  if (zero_stage(opts.sharding) <= 1) world_rs_ = make_group("world_rs", range_of(0, world));
  world_main_ = make_group("world_main", range_of(0, world));
  ag_stream_ = std::make_unique<CommStream>("comm: all-gather");
  rs_stream_ = std::make_unique<CommStream>("comm: reduce-scatter");
  comms_ = {shard_ag_.get(), shard_rs_.get(), replica_rs_.get(), world_rs_.get(), ag_stream_.get(), rs_stream_.get()};

  // Every rank draws the same full initialization, then keeps its shard.
  torch::Generator gen = at::detail::createCPUGenerator(seed);
  for (sizing::UnitLayout& layout : sizing::unit_layouts(model)) {
    torch::Tensor init = init_unit(layout, gen);
    units_.push_back(std::make_unique<Unit>(std::move(layout), opts, shard_rank_, shard_size_, world, init, mem));
  }
}

Engine::~Engine() = default;

void Engine::unshard(Unit& u, const char* reason) {
  if (u.gathered()) return;
  // Rate limiter: at most limit_all_gathers gathered-but-unconsumed units, as FSDP's limit_all_gathers.
  while (int(in_flight_.size()) >= std::max(1, opts_.limit_all_gathers)) {
    tr::instant(keys::kRateLimited, {{keys::kArgUnit, int64_t(u.id())}}, keys::kCatFsdp);
    in_flight_.front()->wait_unshard();
    in_flight_.erase(in_flight_.begin());
  }
  u.unshard(comms_, reason);
  in_flight_.push_back(&u);
}

void Engine::wait_unshard(Unit& u) {
  u.wait_unshard();
  std::erase(in_flight_, &u);
}

torch::Tensor Engine::run_block(Unit& u, const torch::Tensor& x) {
  return block_forward(model_, u.views(), x, opts_.sdpa);
}

int Engine::next_in_forward(int unit) const {
  auto it = std::find(exec_order_.begin(), exec_order_.end(), unit);
  return it != exec_order_.end() && std::next(it) != exec_order_.end() ? *std::next(it) : unit;
}

// Keys in the run's store, one per pass, unit and announcing rank: a few dozen in a test run.
static std::string backward_done_key(int64_t pass, int unit, int rank) {
  return "shardscope/planted/" + std::to_string(pass) + "/" + std::to_string(unit) + "/" + std::to_string(rank);
}

void Engine::planted_delay(int unit, bool after_peers) {
  tr::Range delay(keys::kPlantedDelay, {{keys::kArgUnit, int64_t(unit)}}, keys::kCatPhase);
  if (after_peers) {
    // The others can finish this unit's compute without this rank: its all-gather is already complete.
    std::vector<std::string> peers;
    for (int r = 0; r < rv_.env().world_size; ++r)
      if (r != rv_.env().rank) peers.push_back(backward_done_key(passes_, unit, r));
    rv_.store().wait(peers);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(opts_.backward_delay_ms));
}

void Engine::backward_done(int unit) {
  rv_.store().set(backward_done_key(passes_, unit, rv_.env().rank), std::vector<uint8_t>{1});
}

double Engine::forward_backward(const torch::Tensor& tokens, const torch::Tensor& targets) {
  const int L = int(units_.size()) - 1;
  Unit& root = *units_[0];
  // Samples of the device's memory beside the allocator's: at the step's start and end (after the optimizer)
  // and at the end of forward, where the activations peak.
  mem_.sample_allocator();
  for (auto& u : units_) u->begin_step();
  std::vector<torch::Tensor> inputs(size_t(L) + 1), outputs(size_t(L) + 1);
  torch::Tensor embedded, hidden, loss;
  // Activations: what each block's forward leaves allocated for its backward (its output and the tensors
  // autograd saved; with checkpointing only the output), measured on the allocator and released when the
  // block's backward is done.
  std::vector<int64_t> kept(size_t(L) + 1, 0);
  auto run_measured = [&](Unit& u, const torch::Tensor& x, int64_t& held) {
    const int64_t before = mem_.device_in_use();
    AllocationTag tag(Mem::Activations);  // the allocator's own count of the same (allocator_count.h)
    torch::Tensor out = run_block(u, x);
    held = std::max<int64_t>(0, mem_.device_in_use() - before);
    mem_.add(Mem::Activations, held);
    return out;
  };
  const bool recording = exec_order_.empty();
  ++passes_;
  {
    tr::Range phase(keys::kForwardPhase, keys::kCatPhase);
    unshard(root, "forward");
    wait_unshard(root);
    {
      tr::Range r(keys::kUnitForward, {{keys::kArgUnit, int64_t(0)}}, keys::kCatCompute);
      embedded = embed(root.views(), tokens);
    }
    torch::Tensor act = embedded;
    for (int i = 1; i <= L; ++i) {
      Unit& u = *units_[size_t(i)];
      unshard(u, "forward");
      // Forward prefetch follows the order recorded on the first iteration, as FSDP's does.
      if (opts_.forward_prefetch && !recording && i < L)
        unshard(*units_[size_t(next_in_forward(i))], "forward_prefetch");
      if (recording) exec_order_.push_back(i);
      wait_unshard(u);
      inputs[size_t(i)] = act.detach().requires_grad_(true);
      {
        tr::Range r(keys::kUnitForward, {{keys::kArgUnit, int64_t(i)}}, keys::kCatCompute);
        // With checkpointing no graph is kept, only the unit's input: backward recomputes the block.
        std::optional<torch::NoGradGuard> no_grad;
        if (opts_.activation_checkpointing) no_grad.emplace();
        outputs[size_t(i)] = run_measured(u, inputs[size_t(i)], kept[size_t(i)]);
      }
      act = outputs[size_t(i)];
      if (opts_.sharding == Sharding::FullShard || opts_.sharding == Sharding::HybridShard) u.reshard();
    }
    hidden = act.detach().requires_grad_(true);
    tr::Range r(keys::kUnitForward, {{keys::kArgUnit, int64_t(0)}}, keys::kCatCompute);
    loss = head_loss(root.views(), hidden, targets);
  }
  mem_.sample_allocator();
  {
    tr::Range phase(keys::kBackwardPhase, keys::kCatPhase);
    {
      tr::Range r(keys::kUnitBackward, {{keys::kArgUnit, int64_t(0)}}, keys::kCatCompute);
      loss.backward();
    }
    if (recording) tr::metadata({{"execution_order", exec_order_}});
    torch::Tensor grad = hidden.grad();
    // Backward visits the units in the reverse of the recorded forward order.
    for (auto it = exec_order_.rbegin(); it != exec_order_.rend(); ++it) {
      const int i = *it;
      const int next = std::next(it) != exec_order_.rend() ? *std::next(it) : 0;  // the unit backward reaches next
      Unit& u = *units_[size_t(i)];
      const bool pre = opts_.backward_prefetch == BackwardPrefetch::Pre && next > 0;
      if (opts_.backward_delay_ms > 0 && !pre) planted_delay(i, false);
      for (auto& v : units_) v->reap_reduce(false);  // free finished reductions' buffers here, between blocks
      unshard(u, "backward_on_demand");              // a no-op when a prefetch already issued it
      wait_unshard(u);
      // BACKWARD_PRE: the next unit's all-gather goes out before this unit's gradient computation.
      if (pre && opts_.backward_delay_ms > 0) planted_delay(i, true);
      if (pre) unshard(*units_[size_t(next)], "backward_pre");
      {
        tr::Range r(keys::kUnitBackward, {{keys::kArgUnit, int64_t(i)}}, keys::kCatCompute);
        torch::Tensor out = outputs[size_t(i)];
        int64_t recomputed = 0;  // checkpointing: one block's full activations exist during its backward
        if (opts_.activation_checkpointing) out = run_measured(u, inputs[size_t(i)], recomputed);
        torch::autograd::backward({out}, {grad});
        grad = inputs[size_t(i)].grad();
        mem_.add(Mem::Activations, -recomputed);
      }
      if (pre && opts_.slow_rank >= 0 && opts_.slow_rank != rv_.env().rank) backward_done(i);
      // BACKWARD_POST: after this unit's gradient computation, before its reduction.
      if (opts_.backward_prefetch == BackwardPrefetch::Post && next > 0)
        unshard(*units_[size_t(next)], "backward_post");
      u.reduce_grad(comms_);
      if (u.params_sharded()) u.reshard();
      mem_.add(Mem::Activations, -kept[size_t(i)]);
      inputs[size_t(i)] = outputs[size_t(i)] = torch::Tensor();
    }
    {
      tr::Range r(keys::kUnitBackward, {{keys::kArgUnit, int64_t(0)}}, keys::kCatCompute);
      torch::autograd::backward({embedded}, {grad});
    }
    root.reduce_grad(comms_);
    if (root.params_sharded()) root.reshard();
    for (auto& u : units_) u->wait_reduce();
  }
  mem_.sample_allocator();
  // Through a tensor on the training device: NCCL reduces device memory only.
  torch::Tensor sum = loss.detach().to(torch::kFloat32).reshape({1}).clone();
  world_main_->all_reduce(sum.data_ptr(), 1, DType::F32);
  return sum.item<double>() / rv_.env().world_size;
}

double Engine::clip_grad_norm(double max_norm) {
  // Each rank adds the squares of the gradient it owns; replicated copies are divided back out.
  // Summed where the gradients live (the host under --cpu-offload), reduced where the collectives run.
  torch::Tensor total = torch::zeros({1}, units_[0]->master().options());
  {
    torch::NoGradGuard no_grad;
    for (auto& u : units_) total += u->grad_for_optimizer().pow(2).sum();
  }
  total = total.to(units_[0]->device());
  world_main_->all_reduce(total.data_ptr(), 1, DType::F32);
  const int copies = opts_.sharding == Sharding::NoShard ? rv_.env().world_size : replicas_;
  double norm = std::sqrt(total.item<double>() / copies);
  if (max_norm > 0 && norm > max_norm) {
    torch::NoGradGuard no_grad;
    double coef = max_norm / (norm + 1e-6);
    for (auto& u : units_) u->grad_for_optimizer().mul_(coef);
  }
  return norm;
}

void Engine::barrier() {
  torch::Tensor one = torch::ones({1}, torch::TensorOptions().dtype(torch::kFloat32).device(units_[0]->device()));
  world_main_->all_reduce(one.data_ptr(), 1, DType::F32);
}

void Engine::after_optimizer() {
  for (auto& u : units_) u->after_optimizer(comms_);
  mem_.sample_allocator();
}

torch::Tensor Engine::full_parameters() {
  std::vector<torch::Tensor> parts;
  for (auto& u : units_) parts.push_back(u->gather_master(*shard_ag_));
  return torch::cat(parts);
}

}  // namespace shardscope::train
