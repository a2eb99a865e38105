#pragma once
// The GQA tasks' baseline, "cudnn_sdpa_gqa": cuDNN fused flash attention on the backend C API over
// paged or ragged variable-length sequences (graphs in cudnn_gqa_graph.h), plus its two small
// helper kernels (gqa_aux.h). Every plan is checked against the independent fp32 reference on the
// sample inputs before it may be chosen. When the loaded cuDNN cannot build it (too old, an engine
// refusing the graph, no plan matching the reference, no sm_90 GPU for ragged layouts before 9.18.1),
// the baseline is the independent fp32 GPU
// reference (gqa_reference.h) instead, and its description says so and why: correctness still has a
// trustworthy reference, and no timing claims to be against cuDNN when it is not.
//
// Request: axes of the definition (num_qo_heads, num_kv_heads, head_dim, len_indptr, batch_size or
// total_q, num_pages / page_size / num_kv_indices or total_kv); baseline_options
// {"layout": "paged_decode" | "paged_prefill" | "ragged_prefill", "causal": bool (bottom-right)}.
// Tensors in definition order:
//   paged_decode:   q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale -> output, lse
//   paged_prefill:  q, k_cache, v_cache, qo_indptr, kv_indptr, kv_indices, sm_scale -> output, lse
//   ragged_prefill: q, k, v, qo_indptr, kv_indptr, sm_scale -> output, lse
// sm_scale is a one-element fp32 device buffer (a scalar input as the harness holds it). The sample
// inputs' index arrays and sm_scale fix the graph (longest sequences, scale); later calls must keep
// the same layout and scale (the harness does: the split is part of the workload), else the prepare
// kernel traps.

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "baselines/baseline.h"
#include "baselines/cudnn_gqa_graph.h"
#include "core/result.h"

namespace ptxbench::gpu {

/// The parsed request: layout, heads, and every extent the tensors must have.
struct gqa_request {
  cudnn::gqa_layout layout = cudnn::gqa_layout::ragged_prefill;
  bool causal = false;
  int64_t h_q = 0, h_kv = 0, d = 0;
  int64_t len_indptr = 0;
  int64_t total_q = 0;                      ///< batch_size (decode) or total_q
  int64_t total_kv = 0;                     ///< ragged
  int64_t num_pages = 0, page_size = 1, num_kv_indices = 0;  ///< paged
  std::vector<const char*> input_names;     ///< definition order
};

/// Fails naming the missing axis or the malformed option.
result<gqa_request> gqa_request_from(const baseline_request& request);

/// Checks tensor count, dtypes and shapes against the request ("cudnn_sdpa_gqa: input 3 (kv_indptr):
/// expected int32 [16], got ...").
status check_gqa_tensors(const gqa_request& r, const std::vector<device_tensor>& inputs,
                         const std::vector<device_tensor>& outputs);

/// Builds the baseline on the sample buffers (outputs overwritten): cuDNN when it can, else the
/// independent reference (see the file comment). Fails only for a malformed request, mismatched
/// tensors, invalid sample index arrays or no usable GPU.
result<std::unique_ptr<baseline>> make_cudnn_sdpa_gqa(const baseline_request& request,
                                                      const std::vector<device_tensor>& sample_inputs,
                                                      const std::vector<device_tensor>& sample_outputs,
                                                      cudaStream_t stream);

/// The cuDNN baseline alone, without the fallback (tests compare it with the reference).
result<std::unique_ptr<baseline>> make_cudnn_gqa_only(const baseline_request& request,
                                                      const std::vector<device_tensor>& sample_inputs,
                                                      const std::vector<device_tensor>& sample_outputs,
                                                      cudaStream_t stream);

/// The independent fp32 reference as a baseline (bf16 output, fp32 lse); `why` goes into its
/// description (e.g. why cuDNN was not used).
result<std::unique_ptr<baseline>> make_gqa_reference_baseline(const baseline_request& request,
                                                              const std::vector<device_tensor>& sample_inputs,
                                                              const std::vector<device_tensor>& sample_outputs,
                                                              const std::string& why);

}  // namespace ptxbench::gpu
