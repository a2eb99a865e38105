#pragma once
// The GEMM reference: C[M,N] = A[M,K]·B[N,K]ᵀ in bf16 with fp32 accumulation through cuBLASLt,
// 32 MiB workspace (NVIDIA's recommendation for Hopper), the heuristic's candidates timed once and
// the fastest kept (and remembered on disk per GPU, cuBLAS version and shape).

#include <filesystem>
#include <memory>

#include "core/result.h"
#include "baselines/baseline.h"

namespace ptxbench::gpu {

/// Builds the cuBLASLt baseline for axes M, N, K; autotunes on the sample buffers. cache_dir (may be
/// empty) keeps the chosen algorithm so every evaluation of this shape uses the same one.
result<std::unique_ptr<baseline>> make_cublaslt_gemm(const baseline_request& request,
                                                     const std::vector<device_tensor>& inputs,
                                                     const std::vector<device_tensor>& outputs, cudaStream_t stream,
                                                     const std::filesystem::path& cache_dir);

}  // namespace ptxbench::gpu
