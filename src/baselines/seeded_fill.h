#pragma once
// Seeded, reproducible random fills on the GPU for the attention tests and the probe: element i of a
// fill with seed s is a pure function of (s, i) (a splitmix64 hash fed to Box-Muller), independent
// of the launch configuration, so a rerun with the same seed gives the same tensor.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/result.h"

namespace ptxbench::gpu {

/// Fills n bf16 values with standard-normal samples (rounded to nearest even) on `stream`; fails
/// naming the CUDA error when the launch fails.
status fill_normal_bf16(__nv_bfloat16* out, int64_t n, uint64_t seed, cudaStream_t stream);

}  // namespace ptxbench::gpu
