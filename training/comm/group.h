// A communicator over a set of ranks, as FSDP needs it: all-gather, reduce-scatter and all-reduce (sum) on
// raw buffers. Raw pointers on purpose: a collective writing a parameter buffer must not bump the autograd
// version counter of the tensors viewing it (an ATen copy_ would, and backward would then refuse to run).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shardscope::train {

enum class DType { F32, BF16 };
inline size_t dtype_size(DType d) { return d == DType::F32 ? 4 : 2; }
const char* dtype_name(DType d);
DType parse_dtype(const std::string& s);  // "fp32" | "bf16"; throws std::invalid_argument

// Marks, on the thread that issues a collective, the point in that thread's device work the collective must
// follow (a CUDA event on the GPU; nothing on CPU, where the issuing thread has finished its work already).
using Fence = std::shared_ptr<void>;

class Group {
 public:
  virtual ~Group() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Called by the issuing (compute) thread; the collective run later with this fence waits only for the
  // device work queued before it, not for compute queued between the issue and the run.
  virtual Fence fence() { return nullptr; }
  // `trace_id` (0: none) identifies the collective in the trace: on a GPU with tracing on, the device work
  // it launches carries it as external_id (tracer/cupti/external_id.h), the same value its host range
  // carries, so the two join by identity. Backends that launch no device work ignore it.
  // out holds size() * count elements; `in` (count elements) may not alias out.
  virtual void all_gather(void* out, const void* in, size_t count, DType dt, const Fence& after = nullptr,
                          uint64_t trace_id = 0) = 0;
  // in holds size() * count elements; out receives the sum of every rank's chunk rank() (count elements).
  // `in` is scratch: a backend may sum into it in place (Gloo's ring does, sparing a copy of the unit).
  virtual void reduce_scatter(void* out, void* in, size_t count, DType dt, const Fence& after = nullptr,
                              uint64_t trace_id = 0) = 0;
  // Sums buf across the group, in place.
  virtual void all_reduce(void* buf, size_t count, DType dt, const Fence& after = nullptr, uint64_t trace_id = 0) = 0;
};

class Rendezvous;

// A Gloo communicator over `members` (global ranks, sorted; this rank must be one of them). Every member
// must call this with the same name and members. Each communicator is its own Gloo context, so two of them
// can run at once on different threads, as the all-gather and reduce-scatter streams do.
#if SHARDSCOPE_TRAIN_GLOO
std::unique_ptr<Group> make_gloo_group(Rendezvous& rv, const std::string& name, const std::vector<int>& members,
                                       std::chrono::milliseconds timeout);
#endif

#if SHARDSCOPE_TRAIN_NCCL
// The same over NCCL, for buffers on CUDA device `device` (built when the CUDA toolkit and NCCL are found).
std::unique_ptr<Group> make_nccl_group(Rendezvous& rv, const std::string& name, const std::vector<int>& members,
                                       std::chrono::milliseconds timeout, int device);
#endif

}  // namespace shardscope::train
