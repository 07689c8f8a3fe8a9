// Tags the GPU work a thread launches with an id of the caller's, through CUPTI external correlation: while
// an ExternalId lives, every CUDA call the thread makes (and so every kernel, copy or sync it launches) gets
// an EXTERNAL_CORRELATION record, and the record processor writes keys::kArgExternalId = id and
// keys::kArgExternalKind = keys::kExternalKindTrainerCollective on those events. A trace then joins the GPU
// work to a host range that carries the same id, by identity instead of by thread and time.
//
//   { tracer::cupti::ExternalId tag(uint64_t(issued_ns)); ncclAllGather(...); }
//
// No libtorch, no CUDA runtime: only CUPTI, and only while CUPTI tracing is on (otherwise nothing is called).
#pragma once

#include <cstdint>

namespace shardscope::tracer::cupti {

class ExternalId {
 public:
  explicit ExternalId(uint64_t id) noexcept;
  ~ExternalId();
  ExternalId(const ExternalId&) = delete;
  ExternalId& operator=(const ExternalId&) = delete;
  bool pushed() const { return pushed_; }  // false when GPU tracing is off or CUPTI refused the push

 private:
  bool pushed_ = false;
};

namespace detail {
// The backend says when its CUPTI session takes external ids (EXTERNAL_CORRELATION enabled) and when not.
void set_external_ids_on(bool on);
}  // namespace detail

}  // namespace shardscope::tracer::cupti
