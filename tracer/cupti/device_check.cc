#include "tracer/cupti/device_check.h"

#include <dlfcn.h>

#include <cstdlib>

namespace shardscope::tracer::cupti {

DeviceCheck check_device() {
  DeviceCheck c;
  if (const char* skip = std::getenv("SHARDSCOPE_CUPTI_SKIP_DEVICE_CHECK"); skip && *skip == '1') {
    c.ok = true;
    c.reason = "device check skipped (SHARDSCOPE_CUPTI_SKIP_DEVICE_CHECK=1)";
    return c;
  }
  // Kept loaded: the driver is process-wide and CUPTI will use it.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = dlerror();
    c.reason = std::string("no CUDA driver (") + (err ? err : "dlopen libcuda.so.1 failed") + ")";
    return c;
  }
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
  if (!init || !count) {
    c.reason = "libcuda.so.1 lacks cuInit or cuDeviceGetCount";
    return c;
  }
  if (int rc = init(0); rc != 0) {
    // 34 CUDA_ERROR_STUB_LIBRARY (the toolkit's stub), 35 insufficient driver, 100 no device.
    c.reason = "no usable CUDA driver: cuInit returned " + std::to_string(rc) +
               (rc == 34    ? " (the toolkit's stub libcuda)"
                : rc == 100 ? " (no CUDA device)"
                            : "");
    return c;
  }
  if (int rc = count(&c.devices); rc != 0 || c.devices == 0) {
    c.reason = rc != 0 ? "cuDeviceGetCount returned " + std::to_string(rc) : std::string("no CUDA device");
    return c;
  }
  c.ok = true;
  c.reason = std::to_string(c.devices) + " CUDA device(s)";
  return c;
}

bool driver_loaded() { return dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) != nullptr; }

}  // namespace shardscope::tracer::cupti
