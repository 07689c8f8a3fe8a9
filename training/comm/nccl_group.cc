// Group on NCCL (the GPU backend), for device buffers. Each communicator has its own CUDA stream; a
// collective first makes that stream wait for the default-stream work queued when it was issued (which
// produced its input and last used its output's memory: the fence, an event recorded by the issuing thread),
// then runs, and the calling comm thread waits for it, polling so that a lost peer (NCCL has no timeout of
// its own) ends in an error instead of a hang. After an abort the communicator is gone: every later call
// fails at once.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "training/comm/group.h"
#include "training/comm/rendezvous.h"
#if SHARDSCOPE_HAVE_CUPTI
#include "tracer/cupti/external_id.h"
#endif

namespace shardscope::train {
namespace {

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}

// Held around the NCCL call only: the kernel that call launches carries `id` as its external_id (0: none).
class TraceTag {
 public:
  explicit TraceTag([[maybe_unused]] uint64_t id) {
#if SHARDSCOPE_HAVE_CUPTI
    if (id) tag_.emplace(id);
#endif
  }

 private:
#if SHARDSCOPE_HAVE_CUPTI
  std::optional<tracer::cupti::ExternalId> tag_;
#endif
};

ncclDataType_t nccl_type(DType d) { return d == DType::F32 ? ncclFloat32 : ncclBfloat16; }

class NcclGroup : public Group {
 public:
  NcclGroup(Rendezvous& rv, const std::string& name, int group_rank, int size, int device,
            std::chrono::milliseconds timeout)
      : rank_(group_rank), size_(size), device_(device), timeout_(timeout) {
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cuda(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "cudaEventCreate");
    ncclUniqueId id;
    const std::string key = "shardscope/nccl/" + name;
    if (rank_ == 0) {
      check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
      rv.store().set(
          key, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&id), reinterpret_cast<uint8_t*>(&id) + sizeof id));
    } else {
      auto bytes = rv.store().get(key);  // waits for rank 0 of the group
      if (bytes.size() != sizeof id)
        throw std::runtime_error("NCCL unique id of group " + name + " has the wrong size");
      std::memcpy(&id, bytes.data(), sizeof id);
    }
    check_nccl(ncclCommInitRank(&comm_, size_, id, rank_), "ncclCommInitRank");
  }
  ~NcclGroup() override {
    if (comm_) ncclCommDestroy(comm_);  // an aborted communicator was freed by ncclCommAbort
    cudaEventDestroy(ready_);
    cudaStreamDestroy(stream_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Fence fence() override {
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    cudaEvent_t e = nullptr;
    check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    check_cuda(cudaEventRecord(e, nullptr), "cudaEventRecord");  // the default stream, where compute runs
    return Fence(static_cast<void*>(e), [](void* p) { cudaEventDestroy(static_cast<cudaEvent_t>(p)); });
  }
  void all_gather(void* out, const void* in, size_t count, DType dt, const Fence& after, uint64_t trace_id) override {
    begin(after);
    {
      TraceTag tag(trace_id);
      check_nccl(ncclAllGather(in, out, count, nccl_type(dt), comm_, stream_), "ncclAllGather");
    }
    finish("all_gather");
  }
  void reduce_scatter(void* out, void* in, size_t count, DType dt, const Fence& after, uint64_t trace_id) override {
    begin(after);
    {
      TraceTag tag(trace_id);
      check_nccl(ncclReduceScatter(in, out, count, nccl_type(dt), ncclSum, comm_, stream_), "ncclReduceScatter");
    }
    finish("reduce_scatter");
  }
  void all_reduce(void* buf, size_t count, DType dt, const Fence& after, uint64_t trace_id) override {
    begin(after);
    {
      TraceTag tag(trace_id);
      check_nccl(ncclAllReduce(buf, buf, count, nccl_type(dt), ncclSum, comm_, stream_), "ncclAllReduce");
    }
    finish("all_reduce");
  }

 private:
  void begin(const Fence& after) {
    if (!comm_) throw std::runtime_error("NCCL communicator was aborted after an earlier failure");
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");  // a comm thread starts on device 0
    cudaEvent_t ready = static_cast<cudaEvent_t>(after.get());
    if (!ready) {  // called on the compute thread itself: everything it queued so far
      check_cuda(cudaEventRecord(ready_, nullptr), "cudaEventRecord");
      ready = ready_;
    }
    check_cuda(cudaStreamWaitEvent(stream_, ready, 0), "cudaStreamWaitEvent");
  }
  void abort() {
    ncclCommAbort(comm_);
    comm_ = nullptr;
  }
  void finish(const char* op) {
    auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (;;) {
      cudaError_t e = cudaStreamQuery(stream_);
      if (e == cudaSuccess) return;
      if (e != cudaErrorNotReady) {
        abort();
        check_cuda(e, op);
      }
      ncclResult_t async = ncclSuccess;
      ncclResult_t got = ncclCommGetAsyncError(comm_, &async);
      if (got != ncclSuccess) async = got;
      if (async != ncclSuccess || std::chrono::steady_clock::now() > deadline) {
        abort();
        throw std::runtime_error(
            std::string("NCCL ") + op +
            (async != ncclSuccess ? std::string(" failed: ") + ncclGetErrorString(async) : " timed out"));
      }
      // Polling calls are left out of CUPTI's trace (cupti_backend.cc), so this interval costs no trace size.
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  int rank_, size_, device_;
  std::chrono::milliseconds timeout_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ready_ = nullptr;
  ncclComm_t comm_ = nullptr;
};

}  // namespace

std::unique_ptr<Group> make_nccl_group(Rendezvous& rv, const std::string& name, const std::vector<int>& members,
                                       std::chrono::milliseconds timeout, int device) {
  auto it = std::find(members.begin(), members.end(), rv.env().rank);
  if (it == members.end()) throw std::logic_error("rank is not a member of group " + name);
  return std::make_unique<NcclGroup>(rv, name, int(it - members.begin()), int(members.size()), device, timeout);
}

}  // namespace shardscope::train
