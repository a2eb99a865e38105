#pragma once
// A vendor-library baseline (cuBLASLt GEMM, cuDNN attention) as the trusted harness runs it. Plans,
// heuristics and autotuning happen when one is made, never inside a timed call.

#include <cuda_runtime.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "suite/dtype.h"

namespace ptxbench::gpu {

/// A contiguous (row-major) device tensor owned by the harness.
struct device_tensor {
  void* data = nullptr;
  dtype type = dtype::float32;
  std::vector<int64_t> shape;

  [[nodiscard]] int64_t numel() const;
  [[nodiscard]] std::size_t bytes() const;
};

class baseline {
 public:
  virtual ~baseline() = default;
  /// One line: library and version, the chosen algorithm and how it was chosen.
  [[nodiscard]] virtual std::string description() const = 0;
  /// Enqueues the operation on `stream`: inputs then outputs in definition order. Throws
  /// std::runtime_error (with the library's status text) when the library call fails.
  virtual void run(const std::vector<device_tensor>& inputs, const std::vector<device_tensor>& outputs,
                   cudaStream_t stream) = 0;
};

struct baseline_request {
  std::string kind;                      ///< "cublaslt_gemm" | "cudnn_sdpa_fwd" | "cudnn_sdpa_bwd" | "cudnn_sdpa_gqa"
  std::map<std::string, int64_t> axes;   ///< every axis of the task, resolved
  ordered_json options;                  ///< the task's baseline_options (e.g. {"causal": true})
  int device = 0;
  std::filesystem::path cache_dir;       ///< where tuned choices are remembered (may be empty)
};

/// Builds a baseline for a task: creates handles and plans and autotunes on the sample buffers (whose
/// contents may be overwritten). Fails with a message naming the requirement when the library or
/// configuration is unsupported (e.g. "cuDNN 9.14 lacks ..."), never by crashing.
result<std::unique_ptr<baseline>> make_baseline(const baseline_request& request,
                                                const std::vector<device_tensor>& sample_inputs,
                                                const std::vector<device_tensor>& sample_outputs,
                                                cudaStream_t stream);

}  // namespace ptxbench::gpu
