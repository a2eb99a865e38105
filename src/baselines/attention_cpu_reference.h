#pragma once
// Attention forward and backward on the CPU in double precision, straight from the task
// definitions: the yardstick for the GPU fp32 reference (src/gpu/attention_reference.h) on tiny
// shapes. Tensors are [heads, S, D] row-major floats (heads = B*H); LSE/L is [heads, S].
// Causal means query i attends to keys j <= i.

#include <cstdint>
#include <vector>

#include "core/result.h"

namespace ptxbench::baselines {

struct attention_shape {
  int64_t heads = 0;
  int64_t s = 0;
  int64_t d = 0;
  bool causal = false;
  double scale = 0.0;  ///< multiplies Q K^T
};

struct attention_forward_result {
  std::vector<float> o;    ///< [heads, S, D]
  std::vector<float> lse;  ///< [heads, S], natural log
};

struct attention_backward_result {
  std::vector<float> dq, dk, dv;  ///< [heads, S, D] each
};

/// O = softmax(scale Q K^T [masked]) V and the row log-sum-exp. Fails naming the tensor whose size
/// does not match the shape.
result<attention_forward_result> attention_forward_cpu(const std::vector<float>& q, const std::vector<float>& k,
                                                       const std::vector<float>& v, const attention_shape& shape);

/// The definition's backward from the given O and L (see mha_bwd_*.json): P = exp(scale Q K^T - L),
/// dV = P^T dO, dS = P (dO V^T - rowsum(dO O)), dQ = scale dS K, dK = scale dS^T Q. Fails like the
/// forward.
result<attention_backward_result> attention_backward_cpu(const std::vector<float>& q, const std::vector<float>& k,
                                                         const std::vector<float>& v, const std::vector<float>& o,
                                                         const std::vector<float>& d_o, const std::vector<float>& lse,
                                                         const attention_shape& shape);

}  // namespace ptxbench::baselines
