#pragma once
// Reading a baseline_request and the harness's tensors for the cuDNN attention baselines: which
// problem, and whether the buffers have the dtypes and shapes the definitions promise.

#include <string>
#include <vector>

#include "core/result.h"
#include "baselines/baseline.h"
#include "baselines/cudnn_sdpa_executable.h"
#include "baselines/cudnn_sdpa_graph.h"

namespace ptxbench::gpu {

/// One tensor of a task as the definition declares it.
struct tensor_expectation {
  const char* name;
  dtype type;
  std::vector<int64_t> shape;
};

/// Q, K, V (forward) or Q, K, V, O, dO, L (backward), in definition order.
std::vector<tensor_expectation> expected_inputs(cudnn::sdpa_direction direction, const cudnn::sdpa_problem& problem);
/// O, LSE (forward) or dQ, dK, dV (backward).
std::vector<tensor_expectation> expected_outputs(cudnn::sdpa_direction direction, const cudnn::sdpa_problem& problem);

/// The data pointers, inputs then outputs; fails naming the first tensor whose count, dtype, shape
/// or pointer differs from the definition ("cudnn_sdpa_fwd: input 1 (K): expected bfloat16 [...]").
result<std::vector<void*>> checked_pointers(const std::string& kind, cudnn::sdpa_direction direction,
                                            const cudnn::sdpa_problem& problem,
                                            const std::vector<device_tensor>& inputs,
                                            const std::vector<device_tensor>& outputs);

}  // namespace ptxbench::gpu
