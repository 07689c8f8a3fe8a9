// The demo's two kernels and their launchers (see gpu_demo.cc).
#include <cuda_runtime.h>

__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

__global__ void add(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

void launch_scale(float* x, float a, int n, cudaStream_t s) { scale<<<(n + 255) / 256, 256, 0, s>>>(x, a, n); }
void launch_add(float* y, const float* x, int n, cudaStream_t s) { add<<<(n + 255) / 256, 256, 0, s>>>(y, x, n); }
