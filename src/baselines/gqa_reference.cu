#include "baselines/gqa_reference.h"

#include <string>

namespace ptxbench::gpu {
namespace {

constexpr int k_threads = 128;
constexpr int64_t k_max_d = 256;  // per-thread accumulators live in local memory

// The sequence a query row belongs to: the last b with qo_indptr[b] <= row.
__device__ int64_t sequence_of(const int32_t* qo_indptr, int64_t sequences, int64_t row) {
  int64_t lo = 0, hi = sequences - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (qo_indptr[mid] <= row) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// Element offset of head 0 of key `j` (0-based in sequence b).
__device__ int64_t key_offset(const int32_t* kv_indptr, const int32_t* kv_indices, const gqa_dims& dims, int64_t b,
                              int64_t j) {
  int64_t row = 0;
  if (dims.paged) {
    const int64_t page = kv_indices[kv_indptr[b] + j / dims.page_size];
    row = page * dims.page_size + j % dims.page_size;
  } else {
    row = kv_indptr[b] + j;
  }
  return row * dims.h_kv * dims.d;
}

__device__ float dot_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, int64_t d) {
  float sum = 0.0F;
  for (int64_t e = 0; e < d; ++e) sum += __bfloat162float(a[e]) * __bfloat162float(b[e]);
  return sum;
}

// One thread per (query row, query head): pass 1 finds the row max, pass 2 sums exp and accumulates P V.
__global__ void gqa_rows(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                         const int32_t* qo_indptr, const int32_t* kv_indptr, const int32_t* kv_indices,
                         gqa_dims dims, float* o, float* lse) {
  const int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= dims.total_q * dims.h_q) return;
  const int64_t row = index / dims.h_q, h = index % dims.h_q;
  const int64_t b = qo_indptr ? sequence_of(qo_indptr, dims.sequences, row) : row;
  const int64_t q_start = qo_indptr ? qo_indptr[b] : b;
  const int64_t nq = qo_indptr ? qo_indptr[b + 1] - q_start : 1;
  const int64_t nk = (kv_indptr[b + 1] - kv_indptr[b]) * (dims.paged ? dims.page_size : 1);
  const int64_t i = row - q_start;
  const int64_t last = dims.causal ? min(nk - 1, i + (nk - nq)) : nk - 1;
  const int64_t head = (h / (dims.h_q / dims.h_kv)) * dims.d;
  const __nv_bfloat16* qi = q + (row * dims.h_q + h) * dims.d;
  const float scale = dims.scale_device ? *dims.scale_device : dims.scale;

  float row_max = -INFINITY;
  for (int64_t j = 0; j <= last; ++j)
    row_max = fmaxf(row_max, scale * dot_bf16(qi, k + key_offset(kv_indptr, kv_indices, dims, b, j) + head, dims.d));
  float acc[k_max_d];
  for (int64_t e = 0; e < dims.d; ++e) acc[e] = 0.0F;
  float row_sum = 0.0F;
  for (int64_t j = 0; j <= last; ++j) {
    const int64_t kj = key_offset(kv_indptr, kv_indices, dims, b, j) + head;
    const float p = expf(scale * dot_bf16(qi, k + kj, dims.d) - row_max);
    row_sum += p;
    for (int64_t e = 0; e < dims.d; ++e) acc[e] += p * __bfloat162float(v[kj + e]);
  }
  float* out = o + (row * dims.h_q + h) * dims.d;
  for (int64_t e = 0; e < dims.d; ++e) out[e] = acc[e] / row_sum;
  lse[row * dims.h_q + h] = row_max + logf(row_sum);
}

}  // namespace

status reference_gqa_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                             const int32_t* qo_indptr, const int32_t* kv_indptr, const int32_t* kv_indices,
                             const gqa_dims& dims, float* o, float* lse, cudaStream_t stream) {
  if (dims.total_q <= 0 || dims.sequences <= 0 || dims.h_q <= 0 || dims.h_kv <= 0 || dims.d <= 0 || dims.d > k_max_d)
    return make_error("reference GQA: need total_q, sequences, h_q, h_kv > 0 and 0 < D <= 256");
  if (dims.h_q % dims.h_kv != 0) return make_error("reference GQA: h_q must be a multiple of h_kv");
  if (dims.paged && (kv_indices == nullptr || dims.page_size <= 0))
    return make_error("reference GQA: a paged layout needs kv_indices and a positive page size");
  const int64_t threads = dims.total_q * dims.h_q;
  gqa_rows<<<static_cast<unsigned>((threads + k_threads - 1) / k_threads), k_threads, 0, stream>>>(
      q, k, v, qo_indptr, kv_indptr, kv_indices, dims, o, lse);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return make_error(std::string("reference GQA: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  return ok();
}

}  // namespace ptxbench::gpu
