// Group on NCCL (the GPU backend), for device buffers. Each communicator has its own CUDA stream; a
// collective first makes that stream wait for the work already queued on the default stream (which
// produced its input and last used its output's memory), then runs, and the calling comm thread waits for
// it, polling so that a lost peer (NCCL has no timeout of its own) ends in an error instead of a hang.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "training/comm/group.h"
#include "training/comm/rendezvous.h"

namespace shardscope::train {
namespace {

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}
ncclDataType_t nccl_type(DType d) { return d == DType::F32 ? ncclFloat32 : ncclBfloat16; }

class NcclGroup : public Group {
 public:
  NcclGroup(Rendezvous& rv, const std::string& name, int group_rank, int size, int device, std::chrono::milliseconds timeout)
      : rank_(group_rank), size_(size), device_(device), timeout_(timeout) {
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cuda(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "cudaEventCreate");
    ncclUniqueId id;
    const std::string key = "shardscope/nccl/" + name;
    if (rank_ == 0) {
      check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
      rv.store().set(key, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&id), reinterpret_cast<uint8_t*>(&id) + sizeof id));
    } else {
      auto bytes = rv.store().get(key);  // waits for rank 0 of the group
      if (bytes.size() != sizeof id) throw std::runtime_error("NCCL unique id of group " + name + " has the wrong size");
      std::memcpy(&id, bytes.data(), sizeof id);
    }
    check_nccl(ncclCommInitRank(&comm_, size_, id, rank_), "ncclCommInitRank");
  }
  ~NcclGroup() override {
    ncclCommDestroy(comm_);
    cudaEventDestroy(ready_);
    cudaStreamDestroy(stream_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void all_gather(void* out, const void* in, size_t count, DType dt) override {
    begin();
    check_nccl(ncclAllGather(in, out, count, nccl_type(dt), comm_, stream_), "ncclAllGather");
    finish("all_gather");
  }
  void reduce_scatter(void* out, void* in, size_t count, DType dt) override {
    begin();
    check_nccl(ncclReduceScatter(in, out, count, nccl_type(dt), ncclSum, comm_, stream_), "ncclReduceScatter");
    finish("reduce_scatter");
  }
  void all_reduce(void* buf, size_t count, DType dt) override {
    begin();
    check_nccl(ncclAllReduce(buf, buf, count, nccl_type(dt), ncclSum, comm_, stream_), "ncclAllReduce");
    finish("all_reduce");
  }

 private:
  void begin() {
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");  // a comm thread starts on device 0
    check_cuda(cudaEventRecord(ready_, nullptr), "cudaEventRecord");  // the default stream, where compute runs
    check_cuda(cudaStreamWaitEvent(stream_, ready_, 0), "cudaStreamWaitEvent");
  }
  void finish(const char* op) {
    auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (;;) {
      cudaError_t e = cudaStreamQuery(stream_);
      if (e == cudaSuccess) return;
      if (e != cudaErrorNotReady) check_cuda(e, op);
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm_, &async);
      if (async != ncclSuccess || std::chrono::steady_clock::now() > deadline) {
        ncclCommAbort(comm_);
        throw std::runtime_error(std::string("NCCL ") + op + (async != ncclSuccess ? std::string(" failed: ") + ncclGetErrorString(async) : " timed out"));
      }
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
