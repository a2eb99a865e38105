#include "baselines/gqa_aux.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <string>

namespace ptxbench::gpu {
namespace {

constexpr int k_threads = 256;

__device__ void store_offset(void* offsets, bool int64, int64_t index, int64_t value) {
  if (int64) static_cast<int64_t*>(offsets)[index] = value;
  else static_cast<int32_t*>(offsets)[index] = static_cast<int32_t>(value);
}

// One block per sequence; its threads fill that sequence's row of the padded page table.
__global__ void prepare(gqa_prepare_args a) {
  const int64_t b = blockIdx.x;
  const int64_t q0 = a.qo_indptr ? a.qo_indptr[b] : b;
  const int64_t q1 = a.qo_indptr ? a.qo_indptr[b + 1] : b + 1;
  const int64_t kv0 = a.kv_indptr[b], kv1 = a.kv_indptr[b + 1];
  if (threadIdx.x == 0) {
    const int64_t nq = q1 - q0, nk = (kv1 - kv0) * a.page_size;
    if (nq > a.max_q || nk > a.max_kv || nq < 0 || nk < 0) __trap();
    if (a.scale != nullptr && *a.scale != a.expected_scale) __trap();
    a.seq_q[b] = static_cast<int32_t>(nq);
    a.seq_kv[b] = static_cast<int32_t>(nk);
    if (a.q_offsets) store_offset(a.q_offsets, a.offsets_int64, b, q0 * a.q_row_elems);
    if (a.kv_offsets) store_offset(a.kv_offsets, a.offsets_int64, b, kv0 * a.kv_row_elems);
    if (b == a.batch - 1) {
      if (a.q_offsets) store_offset(a.q_offsets, a.offsets_int64, b + 1, q1 * a.q_row_elems);
      if (a.kv_offsets) store_offset(a.kv_offsets, a.offsets_int64, b + 1, kv1 * a.kv_row_elems);
    }
  }
  if (a.page_table) {
    // Entries past the sequence's pages point at page 0 (valid memory); the padding mask hides them.
    for (int64_t j = threadIdx.x; j < a.table_size; j += blockDim.x)
      a.page_table[b * a.table_size + j] = kv0 + j < kv1 ? a.kv_indices[kv0 + j] : 0;
  }
}

__global__ void scatter_lse(const float* stats, const int32_t* qo_indptr, const int32_t* seq_q, int64_t batch,
                            int64_t h_q, int64_t max_q, float* lse) {
  const int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= batch * h_q * max_q) return;
  const int64_t i = index % max_q, h = (index / max_q) % h_q, b = index / (max_q * h_q);
  if (i >= seq_q[b]) return;
  lse[(qo_indptr[b] + i) * h_q + h] = stats[index];
}

__global__ void count_mismatches(const void* got, bool got_is_bf16, const float* want, int64_t n, float atol,
                                 float rtol, unsigned long long* count) {
  unsigned long long local = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float g = got_is_bf16 ? __bfloat162float(static_cast<const __nv_bfloat16*>(got)[i])
                                : static_cast<const float*>(got)[i];
    const float w = want[i];
    if (!(fabsf(g - w) <= atol + rtol * fabsf(w))) ++local;
  }
  if (local != 0) atomicAdd(count, local);
}

status launched(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return ok();
  return make_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

}  // namespace

status launch_gqa_prepare(const gqa_prepare_args& args, cudaStream_t stream) {
  if (args.batch <= 0 || args.kv_indptr == nullptr || args.seq_q == nullptr || args.seq_kv == nullptr)
    return make_error("GQA prepare: batch, kv_indptr and the sequence-length buffers are required");
  if (args.page_table != nullptr && args.kv_indices == nullptr)
    return make_error("GQA prepare: a padded page table needs kv_indices");
  prepare<<<static_cast<unsigned>(args.batch), k_threads, 0, stream>>>(args);
  return launched("GQA prepare kernel");
}

status launch_count_mismatches(const void* got, bool got_is_bf16, const float* want, int64_t n, float atol, float rtol,
                               unsigned long long* count, cudaStream_t stream) {
  if (n <= 0) return ok();
  const int64_t blocks = std::min<int64_t>((n + k_threads - 1) / k_threads, 4096);
  count_mismatches<<<static_cast<unsigned>(blocks), k_threads, 0, stream>>>(got, got_is_bf16, want, n, atol, rtol, count);
  return launched("GQA self-check kernel");
}

status launch_gqa_scatter_lse(const float* stats, const int32_t* qo_indptr, const int32_t* seq_q, int64_t batch,
                              int64_t h_q, int64_t max_q, float* lse, cudaStream_t stream) {
  const int64_t n = batch * h_q * max_q;
  if (n <= 0) return ok();
  scatter_lse<<<static_cast<unsigned>((n + k_threads - 1) / k_threads), k_threads, 0, stream>>>(
      stats, qo_indptr, seq_q, batch, h_q, max_q, lse);
  return launched("GQA LSE scatter kernel");
}

}  // namespace ptxbench::gpu
