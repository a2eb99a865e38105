#include "gpu/harness/device_ops.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <curand_kernel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <limits>

#include "gpu/common/cuda_check.h"
#include "gpu/harness/grid_shape.h"

namespace ptxbench::gpu {
namespace {

template <typename T>
__device__ T from_float(float v);
template <>
__device__ float from_float<float>(float v) { return v; }
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16(v); }
template <>
__device__ __half from_float<__half>(float v) { return __float2half(v); }

// Each thread owns a Philox subsequence; element i gets the same value whatever the launch shape,
// because the generator is keyed by (seed, i / 4) and we take lane i % 4 of its float4.
template <typename T>
__global__ void normal_kernel(T* out, int64_t n, uint64_t seed) {
  for (int64_t base = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * 4; base < n;
       base += int64_t(gridDim.x) * blockDim.x * 4) {
    curandStatePhilox4_32_10_t st;
    curand_init(seed, static_cast<unsigned long long>(base / 4), 0, &st);
    float4 v = curand_normal4(&st);
    float vals[4] = {v.x, v.y, v.z, v.w};
    for (int k = 0; k < 4 && base + k < n; ++k) out[base + k] = from_float<T>(vals[k]);
  }
}

template <typename T>
__global__ void uniform_int_kernel(T* out, int64_t n, uint64_t seed) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    curandStatePhilox4_32_10_t st;
    curand_init(seed, static_cast<unsigned long long>(i), 0, &st);
    out[i] = static_cast<T>(static_cast<int>(curand(&st) % 2048u) - 1024);
  }
}

}  // namespace

void fill_random(void* data, dtype type, int64_t n, uint64_t seed, cudaStream_t s) {
  int blocks = grid_stride_blocks((n + 3) / 4);
  switch (type) {
    case dtype::float32: normal_kernel<float><<<blocks, k_grid_stride_threads, 0, s>>>(static_cast<float*>(data), n, seed); break;
    case dtype::bfloat16:
      normal_kernel<__nv_bfloat16><<<blocks, k_grid_stride_threads, 0, s>>>(static_cast<__nv_bfloat16*>(data), n, seed);
      break;
    case dtype::float16: normal_kernel<__half><<<blocks, k_grid_stride_threads, 0, s>>>(static_cast<__half*>(data), n, seed); break;
    case dtype::int32:
      uniform_int_kernel<int32_t><<<grid_stride_blocks(n), k_grid_stride_threads, 0, s>>>(static_cast<int32_t*>(data), n, seed);
      break;
    case dtype::int64:
      uniform_int_kernel<int64_t><<<grid_stride_blocks(n), k_grid_stride_threads, 0, s>>>(static_cast<int64_t*>(data), n, seed);
      break;
    default: throw std::runtime_error(std::string("random inputs of dtype ") + std::string(dtype_name(type)) +
                                      " are not supported yet");
  }
  PTXB_CUDA_CALL(cudaGetLastError());
}

void keep_pool_memory(int device) {
  cudaMemPool_t pool;
  PTXB_CUDA_CALL(cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t keep = UINT64_MAX;
  PTXB_CUDA_CALL(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
}

l2_flusher::l2_flusher(int device) {
  int l2 = 0;
  PTXB_CUDA_CALL(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  m_bytes = std::max<std::size_t>(2 * static_cast<std::size_t>(l2), 64u << 20);
  PTXB_CUDA_CALL(cudaMalloc(&m_buffer, m_bytes));
  // No persisting carve-out for the harness's own context (a candidate cannot reach it, but a
  // stale setting from a library would survive the flush otherwise).
  PTXB_CUDA_CALL_NOEXCEPT(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
}

l2_flusher::~l2_flusher() { PTXB_CUDA_CALL_NOEXCEPT(cudaFree(m_buffer)); }

void l2_flusher::flush(cudaStream_t s) {
  PTXB_CUDA_CALL_NOEXCEPT(cudaCtxResetPersistingL2Cache());
  PTXB_CUDA_CALL(cudaMemsetAsync(m_buffer, static_cast<int>(++m_round & 0xFF), m_bytes, s));
}

}  // namespace ptxbench::gpu
