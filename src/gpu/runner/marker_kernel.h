#pragma once
// The runner's marker kernel: one thread that does nothing, launched before and after every
// audited call. Its activity record shows that kernel records were being made at that moment (the
// on/off state of an activity kind cannot be queried from CUPTI), and the launch callbacks must see
// its launch (docs/trusted-timing.md).

#include <cuda_runtime.h>

#include <string_view>

namespace ptxbench::gpu {

/// Launches the marker on `stream`; returns the launch's error (not the kernel's: it cannot fail).
cudaError_t launch_marker_kernel(cudaStream_t stream);

// Its name is recognised by is_marker_kernel_name (gpu/common/launch_audit.h).

}  // namespace ptxbench::gpu
