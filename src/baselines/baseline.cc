#include "baselines/baseline.h"

#include <fmt/format.h>

#include "baselines/cublaslt_gemm.h"

namespace ptxbench::gpu {

int64_t device_tensor::numel() const {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

std::size_t device_tensor::bytes() const {
  return static_cast<std::size_t>(numel()) * static_cast<std::size_t>(dtype_bits(type)) / 8;
}

}  // namespace ptxbench::gpu

#ifdef PTXBENCH_HAVE_CUDNN_SDPA
#include "baselines/cudnn_gqa.h"
#include "baselines/cudnn_sdpa.h"
#endif

namespace ptxbench::gpu {

result<std::unique_ptr<baseline>> make_baseline(const baseline_request& request,
                                                const std::vector<device_tensor>& sample_inputs,
                                                const std::vector<device_tensor>& sample_outputs, cudaStream_t stream) {
  if (request.kind == "cublaslt_gemm")
    return make_cublaslt_gemm(request, sample_inputs, sample_outputs, stream, request.cache_dir);
#ifdef PTXBENCH_HAVE_CUDNN_SDPA
  if (request.kind == "cudnn_sdpa_fwd") return make_cudnn_sdpa_fwd(request, sample_inputs, sample_outputs, stream);
  if (request.kind == "cudnn_sdpa_bwd") return make_cudnn_sdpa_bwd(request, sample_inputs, sample_outputs, stream);
  if (request.kind == "cudnn_sdpa_gqa") return make_cudnn_sdpa_gqa(request, sample_inputs, sample_outputs, stream);
#endif
  if (request.kind.empty()) return make_error("this task has no baseline yet (reference pending)");
  return make_error(fmt::format("baseline '{}' is not available in this build", request.kind));
}

}  // namespace ptxbench::gpu
