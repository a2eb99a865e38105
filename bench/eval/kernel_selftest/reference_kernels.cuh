// Trusted GPU helpers for the kernel self-test: input generation, plain fp32 reference math
// (GEMM, softmax, attention pieces), comparison and guard checks. Deliberately simple: no tensor
// cores, no clever layouts; fp32 everywhere. The self-test also spot-checks these results against
// double-precision CPU math before it trusts them.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace selftest {

using bf16 = __nv_bfloat16;

// ---- inputs ----

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Standard normal values (Box-Muller on a counter-based hash), rounded to bf16; deterministic per seed.
__global__ void fill_normal_bf16(bf16* p, int64_t n, uint64_t seed) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t h = splitmix64(seed ^ splitmix64(uint64_t(i)));
    const float u1 = (float((h >> 40) & 0xFFFFFFu) + 1.0f) * (1.0f / 16777216.0f);  // (0, 1]
    const float u2 = float(h & 0xFFFFFFu) * (1.0f / 16777216.0f);                   // [0, 1)
    p[i] = __float2bfloat16(sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
  }
}

__global__ void bf16_to_f32(const bf16* src, float* dst, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[i] = __bfloat162float(src[i]);
}

// dst[s][i] = float(src[heads[s]][i]) for s < n_heads, i < per_head.
__global__ void gather_heads_f32(const bf16* src, const int* heads, int n_heads, int64_t per_head, float* dst) {
  const int64_t total = int64_t(n_heads) * per_head;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t s = i / per_head, j = i % per_head;
    dst[i] = __bfloat162float(src[int64_t(heads[s]) * per_head + j]);
  }
}

// dst (bf16) at element offset `dst_offset` = round(src) for n elements.
__global__ void f32_to_bf16_at(const float* src, bf16* dst, int64_t dst_offset, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[dst_offset + i] = __float2bfloat16(src[i]);
}

// ---- reference GEMM ----

// A strided matrix view: element (r, c) of batch b is p[b * bs + r * rs + c * cs].
struct strided {
  const float* p;
  int64_t rs, cs, bs;
};

// C[b](m, n) = alpha * sum_k A[b](m, k) * B[b](k, n), fp32. 64x64 tiles, 16-deep K slices, each thread
// owns a 4x4 grid of outputs spaced 16 apart. Bounds-checked for any M, N, K.
__global__ void __launch_bounds__(256) ref_gemm(strided A, strided B, float* C, int64_t ldc, int64_t c_bs, int M, int N,
                                                int K, float alpha) {
  __shared__ float As[16][64 + 1];  // [k][m]
  __shared__ float Bs[16][64 + 1];  // [k][n]
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
  const int64_t b = blockIdx.z;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int i = threadIdx.x; i < 64 * 16; i += 256) {
      int mm, kk;
      if (A.cs == 1) { kk = i % 16; mm = i / 16; } else { mm = i % 64; kk = i / 64; }  // coalesce the contiguous dim
      const int gm = m0 + mm, gk = k0 + kk;
      As[kk][mm] = (gm < M && gk < K) ? A.p[b * A.bs + gm * A.rs + gk * A.cs] : 0.f;
    }
    for (int i = threadIdx.x; i < 64 * 16; i += 256) {
      int kk, nn;
      if (B.cs == 1) { nn = i % 64; kk = i / 64; } else { kk = i % 16; nn = i / 16; }
      const int gk = k0 + kk, gn = n0 + nn;
      Bs[kk][nn] = (gk < K && gn < N) ? B.p[b * B.bs + gk * B.rs + gn * B.cs] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 16; ++kk) {
      float a[4], bv[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) a[r] = As[kk][ty + 16 * r];
#pragma unroll
      for (int c = 0; c < 4; ++c) bv[c] = Bs[kk][tx + 16 * c];
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[r][c] = fmaf(a[r], bv[c], acc[r][c]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int m = m0 + ty + 16 * r, n = n0 + tx + 16 * c;
      if (m < M && n < N) C[b * c_bs + int64_t(m) * ldc + n] = alpha * acc[r][c];
    }
}

inline void launch_ref_gemm(strided A, strided B, float* C, int64_t ldc, int64_t c_bs, int M, int N, int K, float alpha,
                            int batch, cudaStream_t s) {
  const dim3 grid(unsigned((N + 63) / 64), unsigned((M + 63) / 64), unsigned(batch));
  ref_gemm<<<grid, 256, 0, s>>>(A, B, C, ldc, c_bs, M, N, K, alpha);
}

// ---- reference attention pieces ----

__device__ __forceinline__ float block_reduce(float v, bool is_max, float* scratch) {
  for (int off = 16; off > 0; off /= 2) {
    const float o = __shfl_xor_sync(0xffffffffu, v, off);
    v = is_max ? fmaxf(v, o) : v + o;
  }
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < int(blockDim.x / 32); ++w) v = is_max ? fmaxf(v, scratch[w]) : v + scratch[w];
  __syncthreads();
  return v;
}

// One block per row of already-scaled scores P[row][0..S): row softmax in place (masked entries 0)
// and lse[row] = natural log of the row's sum of exp. Query index of the row is row % S.
__global__ void __launch_bounds__(256) ref_softmax_rows(float* P, float* lse, int S, int causal) {
  __shared__ float scratch[8];
  const int64_t row = blockIdx.x;
  const int i = int(row % S);
  float* p = P + row * S;
  const int valid = causal ? i + 1 : S;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < valid; j += blockDim.x) mx = fmaxf(mx, p[j]);
  mx = block_reduce(mx, true, scratch);
  float sum = 0.f;
  for (int j = threadIdx.x; j < valid; j += blockDim.x) sum += expf(p[j] - mx);
  sum = block_reduce(sum, false, scratch);
  const float l = mx + logf(sum);
  if (threadIdx.x == 0) lse[row] = l;
  for (int j = threadIdx.x; j < S; j += blockDim.x) p[j] = j < valid ? expf(p[j] - l) : 0.f;
}

// P[row][j] = exp(P[row][j] - L[row]) (scores already scaled), 0 where masked.
__global__ void ref_p_from_lse(float* P, const float* L, int S, int64_t rows, int causal) {
  const int64_t total = rows * S;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = idx / S;
    const int j = int(idx % S), i = int(row % S);
    P[idx] = (causal && j > i) ? 0.f : expf(P[idx] - L[row]);
  }
}

// delta[row] = sum_d dO[row][d] * O[row][d].
__global__ void ref_row_dot(const float* a, const float* b, float* out, int64_t rows, int D) {
  const int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float s = 0.f;
  for (int d = 0; d < D; ++d) s = fmaf(a[row * D + d], b[row * D + d], s);
  out[row] = s;
}

// dP[row][j] = P[row][j] * (dP[row][j] - delta[row])  (in place: dP becomes dS).
__global__ void ref_ds(const float* P, float* dP, const float* delta, int S, int64_t rows) {
  const int64_t total = rows * S;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += int64_t(gridDim.x) * blockDim.x)
    dP[idx] = P[idx] * (dP[idx] - delta[idx / S]);
}

// ---- checks ----

struct compare_stats {
  unsigned long long mismatches;
  unsigned long long nonfinite;
  unsigned long long checked;
  unsigned long long worst;  // (float bits of the largest |out - ref|) << 32 | element index
  unsigned int max_rel_bits; // float bits of the largest |out - ref| / |ref| over |ref| >= atol
  unsigned int pad;
};

__device__ __forceinline__ unsigned long long warp_sum_u64(unsigned long long v) {
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}
__device__ __forceinline__ unsigned long long warp_max_u64(unsigned long long v) {
  for (int off = 16; off > 0; off /= 2) {
    const unsigned long long o = __shfl_xor_sync(0xffffffffu, v, off);
    v = o > v ? o : v;
  }
  return v;
}

// allclose: |out - ref| <= atol + rtol * |ref|; a non-finite output (or reference) is a mismatch.
// round_ref rounds the fp32 reference to bf16 first (the task's reference returns bf16).
__global__ void compare_kernel(const void* out, int out_is_bf16, const float* ref, int64_t n, float atol, float rtol,
                               int round_ref, unsigned int index_base, compare_stats* st) {
  unsigned long long mism = 0, nonf = 0, worst = 0, cnt = 0;
  float max_rel = 0.f;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float o = out_is_bf16 ? __bfloat162float(static_cast<const bf16*>(out)[i]) : static_cast<const float*>(out)[i];
    float r = ref[i];
    if (round_ref) r = __bfloat162float(__float2bfloat16(r));
    ++cnt;
    if (!isfinite(o) || !isfinite(r)) {
      ++nonf;
      ++mism;
      continue;
    }
    const float err = fabsf(o - r);
    if (err > atol + rtol * fabsf(r)) ++mism;
    if (fabsf(r) >= atol) max_rel = fmaxf(max_rel, err / fabsf(r));
    const unsigned long long key = (static_cast<unsigned long long>(__float_as_uint(err)) << 32) | (index_base + unsigned(i));
    worst = key > worst ? key : worst;
  }
  mism = warp_sum_u64(mism);
  nonf = warp_sum_u64(nonf);
  cnt = warp_sum_u64(cnt);
  worst = warp_max_u64(worst);
  unsigned long long rel = __float_as_uint(max_rel);
  rel = warp_max_u64(rel);
  if (threadIdx.x % 32 == 0) {
    if (mism) atomicAdd(&st->mismatches, mism);
    if (nonf) atomicAdd(&st->nonfinite, nonf);
    atomicAdd(&st->checked, cnt);
    atomicMax(&st->worst, worst);
    atomicMax(&st->max_rel_bits, static_cast<unsigned int>(rel));
  }
}

__global__ void count_nonfinite(const void* out, int is_bf16, int64_t n, unsigned long long* count) {
  unsigned long long c = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = is_bf16 ? __bfloat162float(static_cast<const bf16*>(out)[i]) : static_cast<const float*>(out)[i];
    if (!isfinite(v)) ++c;
  }
  c = warp_sum_u64(c);
  if (threadIdx.x % 32 == 0 && c) atomicAdd(count, c);
}

// Bytes in [p, p + n) that differ from `pattern`.
__global__ void count_changed_bytes(const uint8_t* p, int64_t n, uint8_t pattern, unsigned long long* count) {
  unsigned long long c = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    if (p[i] != pattern) ++c;
  c = warp_sum_u64(c);
  if (threadIdx.x % 32 == 0 && c) atomicAdd(count, c);
}

// Order-sensitive 64-bit checksum of n 8-byte words: sum of w[i] * (2i + 1) (mod 2^64).
__global__ void checksum_words(const uint64_t* w, int64_t n, unsigned long long* sum) {
  unsigned long long s = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    s += w[i] * (2ull * uint64_t(i) + 1ull);
  s = warp_sum_u64(s);
  if (threadIdx.x % 32 == 0) atomicAdd(sum, s);
}

}  // namespace selftest
