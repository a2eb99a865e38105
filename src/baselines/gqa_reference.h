#pragma once
// An independent fp32 grouped-query attention over variable-length sequences on the GPU, written to
// be obviously correct rather than fast: one thread per (query row, query head), plain loops over
// the sequence's keys read through the index arrays exactly as the GQA definitions read them. It
// checks that the cuDNN GQA baseline computes the definitions' function, and it is the correctness
// reference when the loaded cuDNN cannot build that baseline. The CPU yardstick for it is
// baselines/gqa_cpu_reference.h (same conventions).
//
// q [total_q, h_q, d]; k, v ragged [total_kv, h_kv, d] or a page pool [num_pages, page_size, h_kv, d];
// qo_indptr (nullptr for decode: query row t is sequence t), kv_indptr, kv_indices (paged only) are
// device int32 arrays. Causal is bottom-right aligned. Outputs o [total_q, h_q, d] and lse
// [total_q, h_q] (natural log), fp32.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/result.h"

namespace ptxbench::gpu {

struct gqa_dims {
  int64_t total_q = 0;
  int64_t sequences = 0;
  int64_t h_q = 0;
  int64_t h_kv = 0;
  int64_t d = 0;
  bool paged = false;
  int64_t page_size = 1;
  bool causal = false;
  float scale = 0.0F;                  ///< multiplies Q K^T, unless scale_device is set
  const float* scale_device = nullptr;  ///< the call's sm_scale input (device), read by the kernel
};

/// Enqueued on `stream`; fails (naming the problem) for d > 256, h_q not a multiple of h_kv, or a
/// launch error. The index arrays must already be valid (the suite and the baseline check them).
status reference_gqa_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                             const int32_t* qo_indptr, const int32_t* kv_indptr, const int32_t* kv_indices,
                             const gqa_dims& dims, float* o, float* lse, cudaStream_t stream);

}  // namespace ptxbench::gpu
