#pragma once
// The environment a verdict was produced in, as the result cache keys it (queue::run_environment):
// for GPU verdicts the GPU model, driver, CUDA runtime, cuBLASLt and cuDNN versions the harness
// reported; for verdicts a CPU stage decided, the nvcc that built (or refused) the candidate. Both
// carry this PTXBench's version and commit. Workers register theirs, so `serve` can look a
// submission up in the cache under the environments that would evaluate it now.

#include <optional>
#include <string>

#include "core/json_check.h"
#include "core/result.h"
#include "queue/job.h"

namespace ptxbench::service {

/// "0.1.0+<commit>".
std::string ptxbench_version();

/// From the harness's environment object (gpu, libs.nvidia_driver, libs.cuda_runtime, libs.cublasLt,
/// libs.cudnn).
queue::run_environment gpu_environment(const ordered_json& harness_environment);

/// A CPU worker's: the nvcc version, everything GPU-side empty.
queue::run_environment cpu_environment(const std::string& nvcc_version);

ordered_json to_json(const queue::run_environment& env);
std::optional<queue::run_environment> environment_from_json(const ordered_json& j);

}  // namespace ptxbench::service
