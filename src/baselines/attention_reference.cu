#include "baselines/attention_reference.h"

#include <cmath>
#include <string>

namespace ptxbench::gpu {
namespace {

constexpr int k_threads = 128;
constexpr int64_t k_max_d = 256;  // per-thread accumulators live in local memory

__device__ float dot_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, int64_t d) {
  float sum = 0.0F;
  for (int64_t e = 0; e < d; ++e) sum += __bfloat162float(a[e]) * __bfloat162float(b[e]);
  return sum;
}

// One thread per query row: pass 1 finds the row max, pass 2 sums exp and accumulates P V.
__global__ void forward_rows(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                             attention_dims dims, float* o, float* lse) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= dims.heads * dims.s) return;
  const int64_t head = row / dims.s;
  const int64_t i = row % dims.s;
  const int64_t last = dims.causal ? i : dims.s - 1;
  const __nv_bfloat16* qi = q + row * dims.d;
  const __nv_bfloat16* kh = k + head * dims.s * dims.d;
  const __nv_bfloat16* vh = v + head * dims.s * dims.d;

  float row_max = -INFINITY;
  for (int64_t j = 0; j <= last; ++j) row_max = fmaxf(row_max, dims.scale * dot_bf16(qi, kh + j * dims.d, dims.d));
  float acc[k_max_d];
  for (int64_t e = 0; e < dims.d; ++e) acc[e] = 0.0F;
  float row_sum = 0.0F;
  for (int64_t j = 0; j <= last; ++j) {
    const float p = expf(dims.scale * dot_bf16(qi, kh + j * dims.d, dims.d) - row_max);
    row_sum += p;
    for (int64_t e = 0; e < dims.d; ++e) acc[e] += p * __bfloat162float(vh[j * dims.d + e]);
  }
  for (int64_t e = 0; e < dims.d; ++e) o[row * dims.d + e] = acc[e] / row_sum;
  lse[row] = row_max + logf(row_sum);
}

// delta_i = sum_e dO[i,e] * O[i,e]
__global__ void delta_rows(const __nv_bfloat16* o, const __nv_bfloat16* d_o, attention_dims dims, float* delta) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= dims.heads * dims.s) return;
  delta[row] = dot_bf16(o + row * dims.d, d_o + row * dims.d, dims.d);
}

// One thread per query row i: dQ[i] = scale * sum_j dS[i,j] K[j].
__global__ void dq_rows(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                        const __nv_bfloat16* d_o, const float* lse, const float* delta, attention_dims dims,
                        float* dq) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= dims.heads * dims.s) return;
  const int64_t head = row / dims.s;
  const int64_t i = row % dims.s;
  const int64_t last = dims.causal ? i : dims.s - 1;
  const __nv_bfloat16* kh = k + head * dims.s * dims.d;
  const __nv_bfloat16* vh = v + head * dims.s * dims.d;
  float acc[k_max_d];
  for (int64_t e = 0; e < dims.d; ++e) acc[e] = 0.0F;
  for (int64_t j = 0; j <= last; ++j) {
    const float p = expf(dims.scale * dot_bf16(q + row * dims.d, kh + j * dims.d, dims.d) - lse[row]);
    const float dp = dot_bf16(d_o + row * dims.d, vh + j * dims.d, dims.d);
    const float ds = p * (dp - delta[row]);
    for (int64_t e = 0; e < dims.d; ++e) acc[e] += ds * __bfloat162float(kh[j * dims.d + e]);
  }
  for (int64_t e = 0; e < dims.d; ++e) dq[row * dims.d + e] = dims.scale * acc[e];
}

// One thread per key row j: dV[j] = sum_i P[i,j] dO[i], dK[j] = scale * sum_i dS[i,j] Q[i].
__global__ void dkdv_rows(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                          const __nv_bfloat16* d_o, const float* lse, const float* delta, attention_dims dims,
                          float* dk, float* dv) {
  const int64_t key_row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (key_row >= dims.heads * dims.s) return;
  const int64_t head = key_row / dims.s;
  const int64_t j = key_row % dims.s;
  const int64_t first = dims.causal ? j : 0;
  const int64_t base = head * dims.s;
  float acc_k[k_max_d];
  float acc_v[k_max_d];
  for (int64_t e = 0; e < dims.d; ++e) acc_k[e] = acc_v[e] = 0.0F;
  for (int64_t i = first; i < dims.s; ++i) {
    const int64_t row = base + i;
    const float p = expf(dims.scale * dot_bf16(q + row * dims.d, k + key_row * dims.d, dims.d) - lse[row]);
    const float dp = dot_bf16(d_o + row * dims.d, v + key_row * dims.d, dims.d);
    const float ds = p * (dp - delta[row]);
    for (int64_t e = 0; e < dims.d; ++e) {
      acc_v[e] += p * __bfloat162float(d_o[row * dims.d + e]);
      acc_k[e] += ds * __bfloat162float(q[row * dims.d + e]);
    }
  }
  for (int64_t e = 0; e < dims.d; ++e) {
    dv[key_row * dims.d + e] = acc_v[e];
    dk[key_row * dims.d + e] = dims.scale * acc_k[e];
  }
}

__global__ void f32_to_bf16(const float* in, __nv_bfloat16* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2bfloat16_rn(in[i]);
}

unsigned blocks_for(int64_t n) { return static_cast<unsigned>((n + k_threads - 1) / k_threads); }

status launched(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return ok();
  return make_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

status check_dims(const attention_dims& dims) {
  if (dims.heads <= 0 || dims.s <= 0 || dims.d <= 0 || dims.d > k_max_d) {
    return make_error("reference attention: need heads, S > 0 and 0 < D <= 256");
  }
  return ok();
}

}  // namespace

status reference_attention_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                   const attention_dims& dims, float* o, float* lse, cudaStream_t stream) {
  if (status s = check_dims(dims); !s) return s;
  forward_rows<<<blocks_for(dims.heads * dims.s), k_threads, 0, stream>>>(q, k, v, dims, o, lse);
  return launched("reference attention forward");
}

status reference_attention_backward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                    const __nv_bfloat16* o, const __nv_bfloat16* d_o, const float* lse,
                                    const attention_dims& dims, float* dq, float* dk, float* dv,
                                    cudaStream_t stream) {
  if (status s = check_dims(dims); !s) return s;
  const int64_t rows = dims.heads * dims.s;
  float* delta = nullptr;
  if (cudaError_t e = cudaMallocAsync(&delta, static_cast<std::size_t>(rows) * sizeof(float), stream);
      e != cudaSuccess) {
    cudaGetLastError();
    return make_error(std::string("reference attention backward: temporary: ") + cudaGetErrorString(e));
  }
  delta_rows<<<blocks_for(rows), k_threads, 0, stream>>>(o, d_o, dims, delta);
  dq_rows<<<blocks_for(rows), k_threads, 0, stream>>>(q, k, v, d_o, lse, delta, dims, dq);
  dkdv_rows<<<blocks_for(rows), k_threads, 0, stream>>>(q, k, v, d_o, lse, delta, dims, dk, dv);
  status s = launched("reference attention backward");
  cudaFreeAsync(delta, stream);
  return s;
}

status convert_f32_to_bf16(const float* in, __nv_bfloat16* out, int64_t n, cudaStream_t stream) {
  if (n <= 0) return ok();
  f32_to_bf16<<<blocks_for(n), k_threads, 0, stream>>>(in, out, n);
  return launched("fp32 to bf16 conversion");
}

}  // namespace ptxbench::gpu
