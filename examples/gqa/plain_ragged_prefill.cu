// PTXBench example: plain_ragged_prefill.cu (task gqa_ragged_prefill_causal_h32_kv4_d128: q [total_q, 32, 128],
// k, v [total_kv, 4, 128] bf16, qo_indptr and kv_indptr int32 [len_indptr], sm_scale fp32 scalar ->
// output [total_q, 32, 128] bf16 and lse [total_q, 32] fp32; causal aligned to the bottom right).
//
// Demonstrates: a plain CUDA kernel for grouped-query attention over packed variable-length
// sequences. One 128-thread block per (query row, KV head); its 4 warps take every 4th visible key
// and keep an online softmax (fp32, base 2) for all 8 query heads of the group, so each key row of
// K and V is read once per group; each lane owns 4 of the 128 dimensions and a warp shuffle sums the
// dot products; the warps merge their partial results through shared memory. No tensor cores.
//
// Expected PTXBench verdict: PASSED, target instructions absent_in_sass (no GMMA, no TMA).
#include <ptxbench/abi.h>

#include <cuda_bf16.h>
#include <cmath>
#include <cstdint>
#include <string>

namespace {

using bf16 = __nv_bfloat16;

constexpr int kHeadDim = 128;
constexpr int kGroup = 8;  // query heads per KV head: 32 / 4
constexpr int kWarps = 4;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

__device__ __forceinline__ void load4(const bf16* p, float (&out)[4]) {
  const uint2 raw = *reinterpret_cast<const uint2*>(p);
  const __nv_bfloat162 lo = *reinterpret_cast<const __nv_bfloat162*>(&raw.x);
  const __nv_bfloat162 hi = *reinterpret_cast<const __nv_bfloat162*>(&raw.y);
  out[0] = __low2float(lo);
  out[1] = __high2float(lo);
  out[2] = __low2float(hi);
  out[3] = __high2float(hi);
}

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

// The sequence holding query row t: the last b with qo_indptr[b] <= t.
__device__ int sequence_of(const int32_t* qo_indptr, int sequences, int t) {
  int lo = 0, hi = sequences - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (qo_indptr[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

__global__ void __launch_bounds__(kWarps * 32)
gqa_ragged_kernel(const bf16* __restrict__ q, const bf16* __restrict__ k, const bf16* __restrict__ v,
                  const int32_t* __restrict__ qo_indptr, const int32_t* __restrict__ kv_indptr, int sequences,
                  int h_q, int h_kv, float scale_log2, bf16* __restrict__ out, float* __restrict__ lse) {
  const int t = blockIdx.x, g = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int b = sequence_of(qo_indptr, sequences, t);
  const int q_start = qo_indptr[b], nq = qo_indptr[b + 1] - q_start;
  const int kv0 = kv_indptr[b], nk = kv_indptr[b + 1] - kv0;
  const int i = t - q_start;
  const int last = min(nk - 1, i + (nk - nq));  // bottom-right causal

  float qv[kGroup][4];
#pragma unroll
  for (int h = 0; h < kGroup; ++h) {
    load4(q + (size_t(t) * h_q + g * kGroup + h) * kHeadDim + lane * 4, qv[h]);
#pragma unroll
    for (int e = 0; e < 4; ++e) qv[h][e] *= scale_log2;  // logits in base 2
  }
  float m[kGroup], l[kGroup], acc[kGroup][4];
#pragma unroll
  for (int h = 0; h < kGroup; ++h) {
    m[h] = -INFINITY;
    l[h] = 0.f;
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[h][e] = 0.f;
  }
  for (int j = warp; j <= last; j += kWarps) {
    const size_t row = (size_t(kv0) + j) * h_kv + g;
    float kr[4], vr[4];
    load4(k + row * kHeadDim + lane * 4, kr);
    load4(v + row * kHeadDim + lane * 4, vr);
#pragma unroll
    for (int h = 0; h < kGroup; ++h) {
      const float s = warp_sum(qv[h][0] * kr[0] + qv[h][1] * kr[1] + qv[h][2] * kr[2] + qv[h][3] * kr[3]);
      const float m_new = fmaxf(m[h], s);
      const float correction = exp2f(m[h] - m_new);
      const float p = exp2f(s - m_new);
      l[h] = l[h] * correction + p;
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[h][e] = acc[h][e] * correction + p * vr[e];
      m[h] = m_new;
    }
  }

  // Merge the warps' partial softmaxes.
  __shared__ float s_m[kWarps][kGroup], s_l[kWarps][kGroup];
  __shared__ float s_acc[kWarps][kGroup][kHeadDim];
#pragma unroll
  for (int h = 0; h < kGroup; ++h) {
    if (lane == 0) {
      s_m[warp][h] = m[h];
      s_l[warp][h] = l[h];
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) s_acc[warp][h][lane * 4 + e] = acc[h][e];
  }
  __syncthreads();
  if (warp != 0) return;
#pragma unroll
  for (int h = 0; h < kGroup; ++h) {
    float m_all = -INFINITY;
    for (int w = 0; w < kWarps; ++w) m_all = fmaxf(m_all, s_m[w][h]);
    float l_all = 0.f, o[4] = {0.f, 0.f, 0.f, 0.f};
    for (int w = 0; w < kWarps; ++w) {
      if (s_m[w][h] == -INFINITY) continue;  // this warp saw no key
      const float weight = exp2f(s_m[w][h] - m_all);
      l_all += s_l[w][h] * weight;
#pragma unroll
      for (int e = 0; e < 4; ++e) o[e] += s_acc[w][h][lane * 4 + e] * weight;
    }
    const float inv = 1.f / l_all;
    const size_t out_row = size_t(t) * h_q + g * kGroup + h;
    __nv_bfloat162 lo = __floats2bfloat162_rn(o[0] * inv, o[1] * inv);
    __nv_bfloat162 hi = __floats2bfloat162_rn(o[2] * inv, o[3] * inv);
    uint2 packed;
    packed.x = *reinterpret_cast<uint32_t*>(&lo);
    packed.y = *reinterpret_cast<uint32_t*>(&hi);
    *reinterpret_cast<uint2*>(out + out_row * kHeadDim + lane * 4) = packed;
    if (lane == 0) lse[out_row] = m_all * kLn2 + logf(l_all);
  }
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw ptxbench::abi_error(std::string(what) + ": " + cudaGetErrorString(e));
}

void expect_shape(const ptxbench::tensor_view& t, std::initializer_list<int64_t> shape, const char* name) {
  if (t.ndim() != static_cast<int>(shape.size()) || !t.is_contiguous())
    throw ptxbench::shape_error(std::string(name) + " must be contiguous with " + std::to_string(shape.size()) + " dims");
  int i = 0;
  for (int64_t s : shape) {
    if (s >= 0 && t.size(i) != s) throw ptxbench::shape_error(std::string(name) + " has an unexpected shape");
    ++i;
  }
}

}  // namespace

void run(ptxbench::tensor_view q, ptxbench::tensor_view k, ptxbench::tensor_view v, ptxbench::tensor_view qo_indptr,
         ptxbench::tensor_view kv_indptr, ptxbench::tensor_view sm_scale, ptxbench::tensor_view output,
         ptxbench::tensor_view lse, cudaStream_t stream) {
  const int64_t total_q = q.size(0), h_q = q.size(1), total_kv = k.size(0), h_kv = k.size(1);
  expect_shape(q, {total_q, h_q, kHeadDim}, "q");
  expect_shape(k, {total_kv, h_kv, kHeadDim}, "k");
  expect_shape(v, {total_kv, h_kv, kHeadDim}, "v");
  expect_shape(qo_indptr, {-1}, "qo_indptr");
  expect_shape(kv_indptr, {qo_indptr.size(0)}, "kv_indptr");
  expect_shape(output, {total_q, h_q, kHeadDim}, "output");
  expect_shape(lse, {total_q, h_q}, "lse");
  if (sm_scale.ndim() != 0) throw ptxbench::shape_error("sm_scale must be a scalar");
  if (h_q != h_kv * kGroup) throw ptxbench::shape_error("this kernel needs 8 query heads per KV head");
  const int64_t sequences = qo_indptr.size(0) - 1;
  if (sequences < 1 || total_q > 0x7fffffff || h_kv > 65535) throw ptxbench::shape_error("unsupported sizes");
  const dim3 grid(static_cast<unsigned>(total_q), static_cast<unsigned>(h_kv));
  gqa_ragged_kernel<<<grid, kWarps * 32, 0, stream>>>(
      q.data<bf16>(), k.data<bf16>(), v.data<bf16>(), qo_indptr.data<int32_t>(), kv_indptr.data<int32_t>(),
      int(sequences), int(h_q), int(h_kv), sm_scale.scalar<float>() * kLog2e, output.data<bf16>(), lse.data<float>());
  check_cuda(cudaGetLastError(), "launching gqa_ragged_kernel");
}

PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_INT32, PTXBENCH_INT32,
                PTXBENCH_FLOAT32, PTXBENCH_BFLOAT16, PTXBENCH_FLOAT32)
