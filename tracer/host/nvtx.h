// NVTX v3 (header-only, from the CUDA toolkit) so Nsight Systems sees every Range; nothing without CUDA.
// A range's payload is its first integer argument (the trainer's unit or step number): Nsight exports it as
// NVTX_EVENTS.int64Value, which is how the Nsight importer tells unit_forward of unit 3 from unit 4.
#pragma once

#include <cstdint>

#if defined(SHARDSCOPE_HAVE_NVTX) && SHARDSCOPE_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace shardscope::tracer {

#if defined(SHARDSCOPE_HAVE_NVTX) && SHARDSCOPE_HAVE_NVTX
inline void nvtx_push(const char* name) { nvtxRangePushA(name); }
inline void nvtx_push(const char* name, int64_t payload) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  a.payload.llValue = payload;
  nvtxRangePushEx(&a);
}
inline void nvtx_pop() { nvtxRangePop(); }
#else
inline void nvtx_push(const char*) {}
inline void nvtx_push(const char*, int64_t) {}
inline void nvtx_pop() {}
#endif

// An NVTX range only (no trace event), for work the trace records after the fact with complete(): the
// trainer's collectives on their comm threads, so that Nsight sees them with their unit.
class NvtxRange {
 public:
  NvtxRange(const char* name, int64_t payload) noexcept { nvtx_push(name, payload); }
  ~NvtxRange() { nvtx_pop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace shardscope::tracer
