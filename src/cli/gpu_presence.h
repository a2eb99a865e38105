#pragma once
// Whether this machine can run the GPU stages at all, decided before anything starts (a build, the
// harness): without an NVIDIA driver there is no /dev/nvidia0, and the harness would only fail
// later with a CUDA runtime error (cudaErrorInsufficientDriver) that does not say what is missing.

#include <optional>
#include <string>

namespace ptxbench::cli {

/// Why the GPU stages cannot run here ("no NVIDIA GPU or driver found on this machine (/dev/nvidia0
/// is missing)"), or nullopt when a GPU device node exists. PTXBENCH_DEVICE_NODE names another node
/// to look for (tests use it to play a machine with or without a GPU).
std::optional<std::string> missing_gpu();

}  // namespace ptxbench::cli
