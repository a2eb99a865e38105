#include "baselines/seeded_fill.h"

#include <string>

namespace ptxbench::gpu {
namespace {

__device__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

__global__ void normal_bf16(__nv_bfloat16* out, int64_t n, uint64_t seed) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint64_t bits = splitmix64(seed ^ splitmix64(static_cast<uint64_t>(i)));
  // Two 24-bit uniforms; u1 in (0, 1] keeps the logarithm finite.
  const float u1 = (static_cast<float>(bits >> 40) + 1.0F) * (1.0F / 16777216.0F);
  const float u2 = static_cast<float>((bits >> 16) & 0xFFFFFFULL) * (1.0F / 16777216.0F);
  const float z = sqrtf(-2.0F * logf(u1)) * cospif(2.0F * u2);
  out[i] = __float2bfloat16_rn(z);
}

}  // namespace

status fill_normal_bf16(__nv_bfloat16* out, int64_t n, uint64_t seed, cudaStream_t stream) {
  if (n <= 0) return ok();
  constexpr int threads = 256;
  normal_bf16<<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0, stream>>>(out, n, seed);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return make_error(std::string("seeded normal fill: ") + cudaGetErrorString(e));
  return ok();
}

}  // namespace ptxbench::gpu
