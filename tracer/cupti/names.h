// Human-readable names for what CUPTI records as numbers or mangled symbols. Pure lookups: no CUPTI state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <cupti.h>

namespace shardscope::tracer::cupti {

// "_Z13vectorAddPfS_i" -> "vectorAdd(float*, float*, int)"; a name that is not a C++ symbol comes back as is.
std::string demangle(const char* name);

// "cudaLaunchKernel" for a RUNTIME record's cbid, "cuLaunchKernelEx" for a DRIVER one, without CUPTI's
// "_v7000" version suffix. cuptiGetCallbackName only reads a static table, so it works without a GPU.
std::string api_name(CUpti_ActivityKind kind, uint32_t cbid);

// "HtoD", "DtoH", ... for CUpti_ActivityMemcpyKind.
const char* memcpy_kind_name(uint8_t copy_kind);
// "Stream Synchronize", ... for CUpti_ActivitySynchronizationType.
const char* sync_type_name(uint32_t type);
// "CUPTI buffer flush", ... for CUpti_ActivityOverheadKind.
const char* overhead_kind_name(uint32_t kind);

// Replaces each "{}" in pattern by the next number (the track-name patterns in tracer/format/keys.h).
std::string fill(std::string_view pattern, int64_t a, int64_t b = 0);

}  // namespace shardscope::tracer::cupti
