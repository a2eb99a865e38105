#pragma once
// The cuDNN attention baselines of the harness ("cudnn_sdpa_fwd", "cudnn_sdpa_bwd") and the forward
// the harness uses to derive a backward task's O and L inputs. Built on the cuDNN backend C API
// (no cudnn-frontend): see baselines/cudnn_sdpa_graph.h for the graphs, docs/attention-baselines.md for
// the version support matrix.
//
// Plans are cached per (direction, B, H, S, D, causal, scale, bf16, device, cuDNN version): the
// first baseline for a problem builds and autotunes on its sample buffers, later ones reuse the
// executable. The cache is process-wide on purpose (building a runtime-compiled fused-attention
// plan takes seconds); its entries share a workspace, so run them one stream at a time. Across
// processes, the request's cache_dir remembers the tuned choice per host (core/tuned_choice.h):
// a later process rebuilds that plan instead of tuning, so every process measures against it.

#include <cuda_runtime.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "core/result.h"
#include "baselines/baseline.h"
#include "baselines/cudnn_sdpa_graph.h"

namespace ptxbench::gpu {

/// The problem a request describes: axes B, H, S, D; options {"causal": bool, "scale": "1/sqrt(D)" or
/// a number (optional, default 1/sqrt(D))}. Fails naming the missing or malformed field.
result<cudnn::sdpa_problem> sdpa_problem_from_request(const baseline_request& request);

/// "cudnn_sdpa_fwd": inputs Q, K, V ([B,H,S,D] bf16), outputs O ([B,H,S,D] bf16) and LSE ([B,H,S]
/// fp32, natural-log row log-sum-exp of the scaled, masked logits). Builds and autotunes on the
/// sample buffers (outputs overwritten), or rebuilds the plan remembered in request.cache_dir. Fails naming the requirement on unsupported cuDNN, GPU,
/// shape or tensors.
result<std::unique_ptr<baseline>> make_cudnn_sdpa_fwd(const baseline_request& request,
                                                      const std::vector<device_tensor>& sample_inputs,
                                                      const std::vector<device_tensor>& sample_outputs,
                                                      cudaStream_t stream);

/// "cudnn_sdpa_bwd": inputs Q, K, V, O, dO ([B,H,S,D] bf16) and L ([B,H,S] fp32, the forward's
/// log-sum-exp), outputs dQ, dK, dV ([B,H,S,D] bf16). Same build and failure rules as the forward.
result<std::unique_ptr<baseline>> make_cudnn_sdpa_bwd(const baseline_request& request,
                                                      const std::vector<device_tensor>& sample_inputs,
                                                      const std::vector<device_tensor>& sample_outputs,
                                                      cudaStream_t stream);

/// Fills `o` (bf16 [B,H,S,D]) and `lse` (fp32 [B,H,S]) with the cuDNN forward of q, k, v at scale
/// 1/sqrt(D), causal or not: how the harness derives a backward task's O and L inputs (the plan
/// comes from the same cache as a forward baseline with the same cache_dir, which remembers it as
/// the forward baseline does). Enqueued on `stream`; fails like make_cudnn_sdpa_fwd, or when the
/// launch fails.
status attention_forward_for_inputs(const device_tensor& q, const device_tensor& k, const device_tensor& v,
                                    bool causal, const device_tensor& o, const device_tensor& lse,
                                    cudaStream_t stream, const std::filesystem::path& cache_dir = {});

}  // namespace ptxbench::gpu
