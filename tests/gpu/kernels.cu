// Kernels with known characters for the GPU check (scripts/device-check.sh builds this with nvcc
// into a shared library; gpu_check loads it, so the check itself needs no CUDA to build).
#include <cuda_runtime.h>

#include <cstdio>

namespace {

float* g_a = nullptr;
float* g_b = nullptr;
size_t g_n = 0;
void* g_host = nullptr;
void* g_device = nullptr;
size_t g_copy_bytes = 0;

// Bandwidth-bound: one read and one write per element, nothing else.
__global__ void copy_kernel(float* __restrict__ out, const float* __restrict__ in, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

// Compute-bound: a long chain of FMAs in registers, one store at the end.
__global__ void fma_kernel(float* out, int iterations) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f, d = blockIdx.x * 1e-3f;
  for (int i = 0; i < iterations; ++i) {
    a = fmaf(a, b, c);
    d = fmaf(d, c, b);
    b = fmaf(b, a, d);
    c = fmaf(c, d, a);
  }
  if (a + b + c + d == 12345.678f) out[0] = a;  // keeps the loop alive, never true in practice
}

int check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "kernels: %s: %s\n", what, cudaGetErrorString(e));
    return 1;
  }
  return 0;
}

}  // namespace

extern "C" {

/// Allocates two device buffers of `n` floats and a pinned host buffer of `copy_bytes`.
int kernels_setup(size_t n, size_t copy_bytes) {
  g_n = n;
  g_copy_bytes = copy_bytes;
  if (check(cudaMalloc(&g_a, n * sizeof(float)), "cudaMalloc a") ||
      check(cudaMalloc(&g_b, n * sizeof(float)), "cudaMalloc b"))
    return 1;
  if (check(cudaMemset(g_a, 0, n * sizeof(float)), "cudaMemset")) return 1;
  if (check(cudaMallocHost(&g_host, copy_bytes), "cudaMallocHost") ||
      check(cudaMalloc(&g_device, copy_bytes), "cudaMalloc copy"))
    return 1;
  return check(cudaDeviceSynchronize(), "setup sync");
}

int kernels_sm_count() {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return sms;
}

/// Bytes one copy launch moves (read and write).
size_t kernels_copy_bytes_per_launch() {
  return 2 * g_n * sizeof(float);
}

void kernels_copy() {
  copy_kernel<<<kernels_sm_count() * 8, 256>>>(g_b, g_a, g_n);
}

void kernels_fma() {
  fma_kernel<<<kernels_sm_count() * 4, 256>>>(g_b, 200000);
}

/// A badly shaped launch: one block more than there are SMs, so the second wave holds one block.
void kernels_bad_launch() {
  fma_kernel<<<kernels_sm_count() + 1, 1024>>>(g_b, 20000);
}

void kernels_memcpy() {
  cudaMemcpy(g_device, g_host, g_copy_bytes, cudaMemcpyHostToDevice);
}

void kernels_sync() {
  cudaDeviceSynchronize();
}

const char* kernels_last_error() {
  return cudaGetErrorString(cudaGetLastError());
}

}  // extern "C"
