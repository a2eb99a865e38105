#pragma once
// Helpers shared by the test files: fixture paths and the repository root.

#include <filesystem>
#include <string>

namespace ptxbench::testing {

inline std::filesystem::path fixtures_dir() { return PTXBENCH_TEST_FIXTURES; }
inline std::filesystem::path repo_root() { return PTXBENCH_SOURCE_ROOT; }
inline std::filesystem::path bin_dir() { return PTXBENCH_TEST_BIN_DIR; }

/// A fresh empty folder under the system temp dir, removed by the caller (or left for debugging).
std::filesystem::path make_temp_dir(const std::string& tag);

}  // namespace ptxbench::testing
