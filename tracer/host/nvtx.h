// NVTX v3 (header-only, from the CUDA toolkit) so Nsight Systems sees every Range; nothing without CUDA.
#pragma once

#if defined(SHARDSCOPE_HAVE_NVTX) && SHARDSCOPE_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace shardscope::tracer {

#if defined(SHARDSCOPE_HAVE_NVTX) && SHARDSCOPE_HAVE_NVTX
inline void nvtx_push(const char* name) { nvtxRangePushA(name); }
inline void nvtx_pop() { nvtxRangePop(); }
#else
inline void nvtx_push(const char*) {}
inline void nvtx_pop() {}
#endif

}  // namespace shardscope::tracer
