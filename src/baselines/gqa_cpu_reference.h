#pragma once
// Grouped-query attention over variable-length sequences on the CPU in double precision, straight
// from the GQA task definitions (gqa_paged_decode, gqa_paged_prefill_causal, gqa_ragged_prefill_causal):
// the yardstick for the GPU fp32 reference (baselines/gqa_reference.h) on tiny shapes.
//
// q is [total_q, h_q, d]; keys and values are either ragged rows [total_kv, h_kv, d] delimited by
// kv_indptr, or a page pool [num_pages, page_size, h_kv, d] reached through
// kv_indices[kv_indptr[b] .. kv_indptr[b+1]]. Query head h reads key/value head h / (h_q / h_kv).
// Causal is aligned to the bottom right: query i of a sequence with nq queries and nk keys sees key j
// iff j <= i + (nk - nq). Outputs: o [total_q, h_q, d] and the natural-log lse [total_q, h_q].

#include <cstdint>
#include <vector>

#include "baselines/attention_cpu_reference.h"
#include "core/result.h"

namespace ptxbench::baselines {

struct gqa_shape {
  int64_t h_q = 0;
  int64_t h_kv = 0;
  int64_t d = 0;
  bool paged = false;
  int64_t page_size = 1;  ///< paged only
  bool causal = false;    ///< bottom-right aligned
  double scale = 0.0;     ///< multiplies Q K^T
};

/// The sequences: qo_indptr (n+1; decode is 0, 1, ..., n), kv_indptr (n+1, into kv_indices when
/// paged, into the key rows when ragged) and kv_indices (paged only).
struct gqa_index {
  std::vector<int32_t> qo_indptr;
  std::vector<int32_t> kv_indptr;
  std::vector<int32_t> kv_indices;
};

/// Fails, naming the problem, when a size does not match the shape, an indptr does not start at 0 or
/// decreases, a page index lies outside the pool, h_q is not a multiple of h_kv, or a query sees no key.
result<attention_forward_result> gqa_forward_cpu(const std::vector<float>& q, const std::vector<float>& k,
                                                 const std::vector<float>& v, const gqa_index& index,
                                                 const gqa_shape& shape);

}  // namespace ptxbench::baselines
