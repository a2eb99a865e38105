#pragma once
// Which GPU this host has, so that `eval`, `run`, `serve` and `worker` evaluate for the suite target
// that is really here (an H100 host evaluates for h100, never for h200's peaks and result folders).
// The orchestrator has no CUDA: the model comes from the driver's /proc files or from the harness.

#include <filesystem>
#include <string>

#include "core/json_check.h"
#include "core/result.h"
#include "suite/task.h"

namespace ptxbench::eval {

/// What the harness says about CUDA device `device` (`ptxbench-harness --environment FILE --device
/// N`): its environment object, whose "gpu" is the model's name. The one probe of a GPU, for the
/// orchestrator's target and for a service GPU worker's health. The error is one line: the harness
/// missing, failing (its exit and first output) or finding no such device.
result<ordered_json> probe_gpu(int device, const std::filesystem::path& harness);

/// The model of CUDA device `device` as the driver names it ("NVIDIA H100 80GB HBM3"): from
/// /proc/driver/nvidia/gpus when every GPU of the host is the same model (no process started), else
/// from the harness's probe (`ptxbench-harness --environment`, which numbers devices as CUDA does).
/// $PTXBENCH_GPU_MODEL overrides both (a test plays a host with that GPU).
result<std::string> local_gpu_model(int device, const std::filesystem::path& harness);

/// The suite target of local device `device` (suite::target_for_gpu of its model).
result<const target_info*> local_target(const suite& s, int device, const std::filesystem::path& harness);

/// Checks that a target the user named can be evaluated on local device `device`: a target verified
/// at run time must be this GPU's ("--target h200, but GPU 0 is an NVIDIA H100 80GB HBM3, target
/// h100"); a statically verified one (b200 here) is always fine.
status check_target_for_device(const suite& s, const target_info& target, int device,
                               const std::filesystem::path& harness);

}  // namespace ptxbench::eval
