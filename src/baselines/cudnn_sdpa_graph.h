#pragma once
// The cuDNN graphs for bf16 scaled-dot-product attention on [B, H, S, D] contiguous tensors, written
// against the backend C API. Four variants:
//   unified_fwd    one OPERATION_SDPA_FWD node (cuDNN >= 9.13.1; no mask before 9.21, so non-causal)
//   composite_fwd  matmul, scale, [causal mask], softmax with stats, matmul: the op pattern cuDNN's
//                  fused flash-attention (runtime fusion) engine recognises; causal or not
//   composite_bwd  the matching backward pattern (dO.O row sum, recomputed P, dV, dP, dS, dK, dQ)
//   unified_bwd    one OPERATION_SDPA_BWD node (present in the 9.19 headers; non-causal only)
// docs/attention-baselines.md lists the composite graphs op by op.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baselines/cudnn_backend.h"
#include "baselines/cudnn_graph_builder.h"

namespace ptxbench::gpu::cudnn {

enum class sdpa_graph_kind { unified_fwd, composite_fwd, composite_bwd, unified_bwd };

/// "unified_fwd", "composite_fwd", ... (the names used in descriptions, the probe and the docs).
const char* graph_kind_name(sdpa_graph_kind kind);
/// True for the two forward variants.
bool is_forward(sdpa_graph_kind kind);

/// One attention problem: Q, K, V (and O, dO, dQ, dK, dV) are [b, h, s, d] bf16; LSE is [b, h, s] fp32.
struct sdpa_problem {
  int64_t b = 0;
  int64_t h = 0;
  int64_t s = 0;
  int64_t d = 0;
  bool causal = false;  ///< query i attends to keys j <= i (top-left aligned)
  float scale = 0.0F;   ///< applied to Q K^T; the tasks use 1/sqrt(d)
};

/// Variant-pack unique ids of the graph's real tensors.
namespace sdpa_uid {
inline constexpr int64_t q = 1, k = 2, v = 3, o = 4, stats = 5, d_o = 6, dq = 7, dk = 8, dv = 9;
inline constexpr int64_t scale = 20, neg_inf = 21, one = 22;
inline constexpr int64_t softmax_sum = 30, dq_accum = 31;
}  // namespace sdpa_uid

/// A non-virtual intermediate the graph needs memory for (placed after the plan's workspace).
struct scratch_tensor {
  int64_t uid = 0;
  int64_t bytes = 0;
  bool zero_before_run = false;  ///< the dQ fp32 accumulator before cuDNN 9.6 (later ones clear it)
};

struct sdpa_graph {
  sdpa_graph_kind kind = sdpa_graph_kind::composite_fwd;
  graph_builder builder;                              ///< owns every tensor and op descriptor
  descriptor op_graph;                                ///< the finalized OPERATIONGRAPH
  std::vector<int64_t> io_uids;                       ///< the task's tensors: inputs then outputs, definition order
  std::vector<scratch_tensor> scratch;                ///< extra device memory the graph reads/writes
  std::vector<std::pair<int64_t, float>> by_value;    ///< by-value scalars; their addresses go in the variant pack
};

/// Softmax over the last axis of the [.., s_q, s_kv] scores `x` as cuDNN's fused attention engines
/// match it, writing the natural-log row log-sum-exp into the real [.., s_q, 1] tensor `stats`
/// (whose dims give the virtual row tensors; packed strides); returns the bf16 probabilities.
tensor_ref softmax_with_lse(graph_builder& g, tensor_ref x, tensor_ref stats);

/// Builds and finalizes one graph variant; throws cudnn_error when cuDNN rejects a tensor, an op or
/// the graph (the message names which), or when the variant needs a newer cuDNN than `runtime` or
/// than these headers.
std::unique_ptr<sdpa_graph> build_sdpa_graph(sdpa_graph_kind kind, const sdpa_problem& problem,
                                             cudnnHandle_t handle, version runtime);

}  // namespace ptxbench::gpu::cudnn
