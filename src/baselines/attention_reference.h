#pragma once
// An independent fp32 attention on the GPU, written to be obviously correct rather than fast: one
// thread per query row (forward, dQ) or key row (dK, dV), plain loops over the sequence and the
// head dimension. It checks that the cuDNN baselines compute the functions the task definitions
// define; it is far too slow for the timed path (minutes at the headline shape; use a few heads).
//
// Tensors are [heads, S, D] row-major (heads = B*H of a [B, H, S, D] tensor, or a slice of it);
// LSE/L is [heads, S]. Causal means query i sees keys j <= i.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/result.h"

namespace ptxbench::gpu {

struct attention_dims {
  int64_t heads = 0;
  int64_t s = 0;
  int64_t d = 0;
  bool causal = false;
  float scale = 0.0F;  ///< multiplies Q K^T
};

/// O = softmax(scale * Q K^T [masked]) V and LSE = natural-log row log-sum-exp, both fp32.
/// Enqueued on `stream`; fails (naming the CUDA error) when the launch fails or d > 256.
status reference_attention_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                   const attention_dims& dims, float* o, float* lse, cudaStream_t stream);

/// The definition's backward from the given O and L: P = exp(scale Q K^T [masked] - L),
/// dV = P^T dO, dS = P * (dO V^T - rowsum(dO * O)), dQ = scale dS K, dK = scale dS^T Q; fp32 outputs.
/// Enqueued on `stream` (allocates a [heads, S] temporary stream-ordered); fails like the forward.
status reference_attention_backward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                    const __nv_bfloat16* o, const __nv_bfloat16* d_o, const float* lse,
                                    const attention_dims& dims, float* dq, float* dk, float* dv,
                                    cudaStream_t stream);

/// Converts n fp32 values to bf16 (round to nearest even) on `stream`; fails on a launch error.
status convert_f32_to_bf16(const float* in, __nv_bfloat16* out, int64_t n, cudaStream_t stream);

}  // namespace ptxbench::gpu
