#pragma once
// Helpers shared by the test files: fixture paths and the repository root.

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ptxbench::testing {

/// The source tree: $PTXBENCH_ROOT when set (a copy on a GPU host), else the one this was built from.
inline std::filesystem::path repo_root() {
  const char* root = std::getenv("PTXBENCH_ROOT");
  return root && *root ? std::filesystem::path(root) : std::filesystem::path(PTXBENCH_SOURCE_ROOT);
}
/// tests/fixtures of that tree: binaries carried to a GPU host find the host's copy, not the build
/// machine's path compiled into them.
inline std::filesystem::path fixtures_dir() {
  const char* root = std::getenv("PTXBENCH_ROOT");
  return root && *root ? std::filesystem::path(root) / "tests" / "fixtures" : std::filesystem::path(PTXBENCH_TEST_FIXTURES);
}
/// The built binaries: $PTXBENCH_BIN when set (binaries carried to a GPU host), else the build's bin/.
inline std::filesystem::path bin_dir() {
  const char* carried = std::getenv("PTXBENCH_BIN");
  return carried && *carried ? std::filesystem::path(carried) : std::filesystem::path(PTXBENCH_TEST_BIN_DIR);
}

/// A fresh empty folder under the system temp dir, removed by the caller (or left for debugging).
std::filesystem::path make_temp_dir(const std::string& tag);

}  // namespace ptxbench::testing
