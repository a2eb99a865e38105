#pragma once
// The CUDA toolchain a build uses: where nvcc is and exactly which version it is (the version is
// part of every build's cache key and of every verdict).

#include <filesystem>
#include <string>

#include "core/result.h"

namespace ptxbench::build {

struct toolchain {
  std::filesystem::path cuda_root;
  std::filesystem::path nvcc;
  std::string nvcc_version;  ///< e.g. "Cuda compilation tools, release 13.0, V13.0.88"
};

/// Finds nvcc on PATH, then in cuda_root/bin, and asks it for its version. Fails with a message
/// saying where it looked when nvcc is absent or does not run. With a cache_dir, the version of an
/// nvcc binary (identified by path, size and modification time) is remembered there, because
/// `nvcc --version` alone costs more than a whole build-cache hit may take.
result<toolchain> find_toolchain(const std::filesystem::path& cuda_root,
                                 const std::filesystem::path& cache_dir = {});

}  // namespace ptxbench::build
