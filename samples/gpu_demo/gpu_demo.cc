// A small CUDA program traced with GPU tracing on (tracer::cupti::start): kernels on two streams, copies
// both ways, a memset, allocations and frees, an NVTX range in its own domain, stream and device syncs. It
// is what to run first on a GPU machine to see every kind of GPU event in one trace. Without a GPU it says
// so and exits 0, with a host-only trace.
//
//   shardscope-gpu-demo [--out trace.json.gz] [--steps 5]
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "tracer/cupti/cupti_backend.h"

namespace tr = shardscope::tracer;

// The kernels live in kernels.cu, compiled by nvcc alone: this file needs C++20 for the tracer's headers.
void launch_scale(float* x, float a, int n, cudaStream_t s);
void launch_add(float* y, const float* x, int n, cudaStream_t s);

int main(int argc, char** argv) {
  std::string out = "gpu_demo.json.gz";
  int steps = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--out")) out = argv[i + 1];
    else if (!std::strcmp(argv[i], "--steps"))
      steps = std::atoi(argv[i + 1]);
  }
  bool gpu = tr::cupti::start({.path = out, .rank = 0, .run_config = {{"program", "gpu-demo"}}});
  int devices = 0;
  if (!gpu || cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    { tr::Range r("no GPU: host only"); }
    tr::stop();
    std::printf("no GPU: wrote a host-only trace to %s\n", out.c_str());
    return 0;
  }
  const int n = 1 << 22;
  nvtxDomainHandle_t domain = nvtxDomainCreateA("gpu-demo");
  cudaStream_t compute, copy;
  cudaStreamCreate(&compute);
  cudaStreamCreate(&copy);
  float *host = nullptr, *a = nullptr, *b = nullptr;
  cudaMallocHost(&host, n * sizeof(float));
  for (int step = 0; step < steps; ++step) {
    tr::Range r("step", {{"step", step}});
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = "demo step";
    attr.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    attr.payload.ullValue = uint64_t(step) + 1;
    nvtxDomainRangePushEx(domain, &attr);
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    cudaMemsetAsync(b, 0, n * sizeof(float), compute);
    cudaMemcpyAsync(a, host, n * sizeof(float), cudaMemcpyHostToDevice, copy);
    cudaStreamSynchronize(copy);
    launch_scale(a, 2.0f, n, compute);
    launch_add(b, a, n, compute);
    cudaMemcpyAsync(host, b, n * sizeof(float), cudaMemcpyDeviceToHost, compute);
    cudaDeviceSynchronize();
    cudaFree(a);
    cudaFree(b);
    nvtxDomainRangePop(domain);
  }
  cudaFreeHost(host);
  cudaStreamDestroy(compute);
  cudaStreamDestroy(copy);
  cudaError_t err = cudaGetLastError();
  tr::stop();
  std::printf("%d steps on %d device(s): %s; trace in %s\n", steps, devices, cudaGetErrorString(err), out.c_str());
  return err == cudaSuccess ? 0 : 1;
}
