#include "training/fsdp/unit.h"

#include <ATen/native/Resize.h>

#include "sizing/zero_model.h"
#include "training/fsdp/allocator_count.h"
#include "tracer/format/keys.h"
#include "tracer/tracer.h"

namespace shardscope::train {
namespace {

namespace tr = tracer;

torch::ScalarType scalar(DType d) { return d == DType::F32 ? torch::kFloat32 : torch::kBFloat16; }

// Frees or re-allocates a tensor's storage in place, keeping the StorageImpl every view shares. On a GPU
// the old block goes back to the caching allocator on the default stream, which orders its reuse.
void resize_storage(const torch::Tensor& t, size_t bytes) {
  TORCH_CHECK(t.storage_offset() == 0, "flat parameter must own its storage");
  c10::StorageImpl* s = t.storage().unsafeGetStorageImpl();
  if (t.is_cpu()) {
    at::native::resize_bytes_cpu(s, bytes);
    return;
  }
  s->set_data_ptr_noswap(s->allocator()->allocate(bytes));
  s->set_nbytes(bytes);
}

// A host copy for --cpu-offload, pinned on a GPU machine so the copies to and from the device are DMA.
torch::Tensor on_host(const torch::Tensor& t, bool cuda) {
  torch::Tensor h = t.to(torch::kCPU);
  return cuda ? h.pin_memory() : h.clone();
}

// One collective as the trace records it: on the comm thread's own track, from `start` to now, with the
// unit, bytes per rank, group size and when the compute thread issued it. issued_ns is also the trace id
// handed to the group, which tags the collective's kernel with it (Group::all_gather's trace_id).
void trace_collective(const char* kind, int64_t start, int64_t unit, int64_t bytes, int group_size, int64_t issued) {
  tr::complete(0, kind, keys::kCatComm, start, tr::now_ns(),
               {{keys::kArgUnit, unit},
                {keys::kArgBytes, bytes},
                {keys::kArgGroupSize, group_size},
                {keys::kArgIssuedNs, issued}});
}

}  // namespace

Unit::Unit(sizing::UnitLayout layout, const FsdpOptions& opts, int shard_rank, int shard_size, int world_size,
           const torch::Tensor& full_init, MemoryLedger& mem)
    : layout_(std::move(layout)),
      opts_(opts),
      shard_rank_(shard_rank),
      shard_size_(shard_size),
      world_size_(world_size),
      mem_(mem) {
  padded_ = sizing::padded_numel(layout_.numel, shard_size_);
  shard_numel_ = padded_ / shard_size_;
  params_sharded_ = zero_stage(opts.sharding) >= 2;
  grads_sharded_ = params_sharded_;

  torch::NoGradGuard no_grad;
  device_ = opts.cuda ? torch::Device(torch::kCUDA, int16_t(opts.device)) : torch::Device(torch::kCPU);
  // Each category's tensors are allocated under its tag (allocator_count.h), so that what the allocator
  // holds for them can be checked against what the ledger adds up.
  torch::Tensor padded_init;
  {
    // Without sharding the padded initialization becomes the master; otherwise it is a temporary.
    std::optional<AllocationTag> tag;
    if (opts.sharding == Sharding::NoShard) tag.emplace(state_mem(Mem::ShardedParams));
    padded_init = torch::zeros({padded_}, torch::TensorOptions().dtype(torch::kFloat32).device(device_));
    padded_init.narrow(0, 0, layout_.numel).copy_(full_init);
  }
  {
    AllocationTag tag(state_mem(Mem::ShardedParams));
    if (opts.sharding == Sharding::NoShard) {
      master_ = padded_init;
    } else {
      master_ = padded_init.narrow(0, int64_t(shard_rank_) * shard_numel_, shard_numel_).clone();
    }
    if (opts.cpu_offload) master_ = on_host(master_, opts.cuda);
  }
  mem_.add(state_mem(Mem::ShardedParams), master_.numel() * 4);

  if (opts.sharding == Sharding::NoShard && opts.param_dtype == DType::F32 && !opts.cpu_offload) {
    full_ = master_;  // DDP in fp32 keeps one copy: the master is the parameter
  } else if (!params_sharded_) {
    AllocationTag tag(Mem::UnshardedParams);
    // A copy of its own even where the dtype is the same (zero1 in fp32), not the temporary itself.
    full_ = padded_init.to(scalar(opts.param_dtype), /*non_blocking=*/false, /*copy=*/true);
    mem_.add(Mem::UnshardedParams, padded_ * int64_t(dtype_size(opts.param_dtype)));
  }
  gathered_ = full_.defined();

  {
    AllocationTag tag(state_mem(Mem::Gradients));
    grad_ = torch::zeros({grads_sharded_ ? shard_numel_ : padded_}, padded_init.options());
    if (opts.cpu_offload) grad_ = on_host(grad_, opts.cuda);
  }
  mem_.add(state_mem(Mem::Gradients), grad_.numel() * 4);
  {
    AllocationTag tag(state_mem(Mem::OptimizerState));
    exp_avg_ = torch::zeros_like(master_);
    exp_avg_sq_ = torch::zeros_like(master_);
  }
  mem_.add(state_mem(Mem::OptimizerState), 2 * master_.numel() * 4);
}

void Unit::unshard(const Comms& c, const char* reason) {
  if (gathered_) return;
  const size_t bytes = size_t(padded_) * dtype_size(opts_.param_dtype);
  {
    AllocationTag tag(Mem::UnshardedParams);
    if (!full_.defined())
      full_ = torch::empty({padded_}, torch::TensorOptions().dtype(scalar(opts_.param_dtype)).device(device_));
    else
      resize_storage(full_, bytes);
  }
  mem_.add(Mem::UnshardedParams, int64_t(bytes));
  gathered_ = true;

  // The shard in the parameter dtype on the training device: the master itself in fp32 without offload,
  // else a copy (under --cpu-offload the host-to-device copy FSDP also makes before each all-gather).
  // non_blocking: from the pinned host master under --cpu-offload the copy is queued and the cast runs on
  // the device; the fence below orders the all-gather after it.
  gather_send_ = master_.to(device_, scalar(opts_.param_dtype), /*non_blocking=*/true);
  void* out = full_.data_ptr();
  const void* send = gather_send_.data_ptr();
  Group* g = c.shard_ag;
  const int64_t issued = tr::now_ns(), count = shard_numel_, unit = id();
  const DType dt = opts_.param_dtype;
  tr::instant(keys::kPrefetch, {{keys::kArgUnit, unit}, {keys::kArgReason, reason}}, keys::kCatFsdp);
  Fence after = g->fence();  // after the shard's copy/cast just queued, not after later compute
  // The closure holds raw pointers only: every tensor is allocated and freed on the compute thread, so the
  // allocator's count there is the compute's own (see Engine's activation measurement).
  gather_ = c.ag_stream->issue([=] {
    int64_t start = tr::now_ns();
    {
      tr::NvtxRange nvtx(keys::kAllGather, unit);
      g->all_gather(out, send, size_t(count), dt, after, uint64_t(issued));
    }
    trace_collective(keys::kAllGather, start, unit, int64_t(bytes), g->size(), issued);
  });
}

void Unit::wait_unshard() {
  if (gather_) {
    gather_->get();
    gather_.reset();
    gather_send_ = torch::Tensor();
  }
}

ParamViews Unit::views() {
  // Fresh views per use: each forward (and each recomputation) builds its own graph, and every graph's
  // gradient accumulates into the one flat gradient of flat_.
  if (!flat_.defined()) begin_step();
  ParamViews v;
  v.reserve(layout_.params.size());
  for (const sizing::ParamSpec& p : layout_.params) v.push_back(flat_.narrow(0, p.offset, p.numel()).view(p.shape));
  return v;
}

void Unit::begin_step() {
  // The flat parameter leaf shares full_'s storage and version counter; a new one each step drops the last
  // step's gradient and graph.
  flat_ = full_.defined() ? full_.detach().requires_grad_(true) : torch::Tensor();
}

void Unit::reshard() {
  if (!params_sharded_ || !gathered_) return;
  wait_unshard();
  resize_storage(full_, 0);
  mem_.add(Mem::UnshardedParams, -int64_t(size_t(padded_) * dtype_size(opts_.param_dtype)));
  gathered_ = false;
}

void Unit::reduce_grad(const Comms& c) {
  torch::Tensor g = flat_.grad();
  if (!g.defined())
    g = torch::zeros(
        {padded_}, torch::TensorOptions().dtype(scalar(opts_.param_dtype)).device(device_));  // no gradient reached it
  torch::Tensor input = g.to(scalar(opts_.reduce_dtype)).contiguous();
  flat_.mutable_grad() = torch::Tensor();
  const int64_t issued = tr::now_ns(), unit = id();
  const DType dt = opts_.reduce_dtype;
  const int64_t in_bytes = input.numel() * input.element_size();
  // As for the all-gather, the compute thread owns the buffers (reduce_input_, reduced_) and frees them in
  // reap_reduce(); the closure works on raw pointers.
  reduce_input_ = input;
  void* in = input.data_ptr();
  if (grads_sharded_) {
    Group* g_rs = c.shard_rs;
    Group* replica = c.replica_rs;
    const int64_t count = shard_numel_;
    // An fp32 reduction on the training device lands in the gradient itself; otherwise in a buffer of the
    // reduce dtype on the device, copied into the gradient (on the host under --cpu-offload) when reaped.
    const bool into_grad = dt == DType::F32 && !opts_.cpu_offload;
    reduced_ = into_grad ? grad_ : torch::empty({count}, input.options());
    void* out = reduced_.data_ptr();
    Fence after = g_rs->fence();
    reduce_ = c.rs_stream->issue([=] {
      int64_t start = tr::now_ns();
      {
        tr::NvtxRange nvtx(keys::kReduceScatter, unit);
        g_rs->reduce_scatter(out, in, size_t(count), dt, after, uint64_t(issued));
      }
      trace_collective(keys::kReduceScatter, start, unit, in_bytes, g_rs->size(), issued);
      if (replica && replica->size() > 1) {
        start = tr::now_ns();
        {
          tr::NvtxRange nvtx(keys::kAllReduce, unit);
          replica->all_reduce(out, size_t(count), dt, nullptr, uint64_t(issued));
        }
        trace_collective(keys::kAllReduce, start, unit, count * int64_t(dtype_size(dt)), replica->size(), issued);
      }
    });
  } else {
    Group* world = c.world_rs;
    const int64_t count = input.numel();
    reduced_ = input;  // summed in place
    Fence after = world->fence();
    reduce_ = c.rs_stream->issue([=] {
      int64_t start = tr::now_ns();
      {
        tr::NvtxRange nvtx(keys::kAllReduce, unit);
        world->all_reduce(in, size_t(count), dt, after, uint64_t(issued));
      }
      trace_collective(keys::kAllReduce, start, unit, in_bytes, world->size(), issued);
    });
  }
}

void Unit::reap_reduce(bool block) {
  if (!reduce_) return;
  if (!block && reduce_->wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  reduce_->get();  // rethrows the collective's error
  reduce_.reset();
  // On the compute thread, once the reduction is done: into the fp32 gradient, averaged over the world.
  torch::NoGradGuard no_grad;
  if (!reduced_.is_same(grad_)) grad_.copy_(reduced_);
  grad_.mul_(1.0 / double(world_size_));
  reduce_input_ = reduced_ = torch::Tensor();
}

void Unit::wait_reduce() { reap_reduce(true); }

torch::Tensor Unit::grad_for_optimizer() {
  if (opts_.sharding == Sharding::Zero1) return grad_.narrow(0, int64_t(shard_rank_) * shard_numel_, shard_numel_);
  return grad_;
}

void Unit::after_optimizer(const Comms& c) {
  torch::NoGradGuard no_grad;
  if (opts_.sharding == Sharding::NoShard && !full_.is_same(master_)) {
    full_.copy_(master_);
  } else if (opts_.sharding == Sharding::Zero1) {
    torch::Tensor send = master_.to(device_, scalar(opts_.param_dtype), /*non_blocking=*/true);
    void* out = full_.data_ptr();
    const void* in = send.data_ptr();  // `send` stays with this thread, which frees it after the gather
    Group* g = c.shard_ag;
    const int64_t count = shard_numel_;
    const DType dt = opts_.param_dtype;
    Fence after = g->fence();
    c.ag_stream->issue([=] { g->all_gather(out, in, size_t(count), dt, after); }).get();
  }
}

torch::Tensor Unit::gather_master(Group& g) {
  if (opts_.sharding == Sharding::NoShard) return master_.narrow(0, 0, layout_.numel).cpu();
  torch::Tensor shard = master_.to(device_);  // NCCL gathers device memory only
  torch::Tensor all = torch::empty({padded_}, shard.options());
  g.all_gather(all.data_ptr(), shard.data_ptr(), size_t(shard_numel_), DType::F32);
  return all.narrow(0, 0, layout_.numel).cpu();
}

}  // namespace shardscope::train
