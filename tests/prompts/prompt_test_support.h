#pragma once
// Helpers for the prompt and knowledge-pack tests: where the cl100k ranks and the CUDA tools are.

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "core/process.h"
#include "test_support.h"

namespace ptxbench::testing {

/// The repository root: $PTXBENCH_ROOT when set (a test binary carried to another machine, e.g. the
/// GPU host, runs against that machine's copy of the tree), else the source tree it was built from.
inline std::filesystem::path source_root() {
  const char* env = std::getenv("PTXBENCH_ROOT");
  return env && *env ? std::filesystem::path(env) : repo_root();
}

/// The cl100k ranks fetched by scripts/setup.sh, or nullopt (tests needing them then skip).
inline std::optional<std::filesystem::path> cl100k_ranks() {
  for (const auto& p : {repo_root() / "build" / "third_party" / "tiktoken" / "cl100k_base.json",
                        bin_dir().parent_path() / "third_party" / "tiktoken" / "cl100k_base.json"})
    if (std::filesystem::is_regular_file(p)) return p;
  return std::nullopt;
}

/// A CUDA toolkit program (nvcc, cuobjdump), from the toolkit found at configure time or PATH.
inline std::optional<std::filesystem::path> cuda_tool(const std::string& name) {
#ifdef PTXBENCH_CUDA_ROOT
  return find_executable(name, {std::filesystem::path(PTXBENCH_CUDA_ROOT) / "bin", "/usr/local/cuda/bin"});
#else
  return find_executable(name, {"/usr/local/cuda/bin"});
#endif
}

}  // namespace ptxbench::testing
