// Is there a CUDA driver and a device? Asked of the driver itself (dlopen, never linked: a program must
// start on machines without libcuda.so.1), because CUPTI without one answers every call with error 999.
#pragma once

#include <string>

namespace shardscope::tracer::cupti {

struct DeviceCheck {
  bool ok = false;
  int devices = 0;
  std::string reason;  // why not, or how it was decided
};

// dlopen("libcuda.so.1"), cuInit(0), cuDeviceGetCount. SHARDSCOPE_CUPTI_SKIP_DEVICE_CHECK=1 answers ok without
// asking (for exercising CUPTI's own error path on machines without a GPU).
DeviceCheck check_device();

// Whether libcuda.so.1 is already loaded in this process (no loading, no driver call): what the injection
// library may ask from inside cuInit, which must not be re-entered.
bool driver_loaded();

}  // namespace shardscope::tracer::cupti
