#pragma once
// The two small kernels around the cuDNN GQA graph, part of the baseline's timed call (cuDNN takes
// per-sequence lengths, element offsets and a page table, the tasks give indptr arrays; cuDNN's stats
// come out padded per sequence, the tasks want [total_q, h_q]):
//   prepare: seq_len_q, seq_len_kv, the ragged element offsets and (padded form) the page table from
//            qo_indptr / kv_indptr / kv_indices; it traps when a sequence is longer than the graph
//            was built for or sm_scale differs from the value the graph was built with, both
//            impossible while the harness keeps the workload's layout and scalar fixed (the trap makes
//            a broken invariant loud instead of a silently wrong reference);
//   scatter: LSE rows from the padded stats [b, h_q, max_q] into [total_q, h_q].

#include <cuda_runtime.h>

#include <cstdint>

#include "core/result.h"

namespace ptxbench::gpu {

struct gqa_prepare_args {
  int64_t batch = 0;
  const int32_t* qo_indptr = nullptr;   ///< nullptr: decode, one query per sequence
  const int32_t* kv_indptr = nullptr;   ///< pages (paged) or key rows (ragged)
  const int32_t* kv_indices = nullptr;  ///< for the padded page table; nullptr otherwise
  int64_t page_size = 1;                ///< keys per page (1 for ragged)
  int32_t* seq_q = nullptr;             ///< [batch]
  int32_t* seq_kv = nullptr;            ///< [batch]
  void* q_offsets = nullptr;            ///< [batch+1] qo_indptr * q_row_elems, or nullptr
  void* kv_offsets = nullptr;           ///< [batch+1] kv_indptr * kv_row_elems, or nullptr
  bool offsets_int64 = false;
  int64_t q_row_elems = 0;              ///< h_q * d
  int64_t kv_row_elems = 0;             ///< h_kv * d
  int32_t* page_table = nullptr;        ///< [batch, table_size] (padded form), or nullptr
  int64_t table_size = 0;
  int64_t max_q = 0, max_kv = 0;        ///< what the graph was built for
  const float* scale = nullptr;         ///< the call's sm_scale (device), or nullptr to skip the check
  float expected_scale = 0.0F;
};

/// Enqueues the prepare kernel; fails on a launch error.
status launch_gqa_prepare(const gqa_prepare_args& args, cudaStream_t stream);

/// Adds to *count the elements where !(|got - want| <= atol + rtol * |want|) (NaN and Inf count):
/// how the baseline checks each plan against the independent reference before it may be chosen.
status launch_count_mismatches(const void* got, bool got_is_bf16, const float* want, int64_t n, float atol, float rtol,
                               unsigned long long* count, cudaStream_t stream);

/// lse[(qo_indptr[b] + i) * h_q + h] = stats[(b * h_q + h) * max_q + i] for i < seq_q[b].
status launch_gqa_scatter_lse(const float* stats, const int32_t* qo_indptr, const int32_t* seq_q, int64_t batch,
                              int64_t h_q, int64_t max_q, float* lse, cudaStream_t stream);

}  // namespace ptxbench::gpu
