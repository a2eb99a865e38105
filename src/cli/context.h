#pragma once
// What every subcommand needs from the environment, read once at the edge (here) and passed down.

#include <filesystem>
#include <string>

#include "core/exit_status.h"

namespace ptxbench::cli {

struct context {
  std::filesystem::path root;       ///< holds suite/, packs/, include/ (PTXBENCH_ROOT or the source tree)
  std::filesystem::path cache_dir;  ///< build cache (PTXBENCH_CACHE or ~/.cache/ptxbench)
  /// Who chose cache_dir, for messages about it: "--cache-dir", "PTXBENCH_CACHE" or "cache folder".
  std::string cache_dir_named_by;
  std::filesystem::path cuda_root;  ///< CUDA toolkit (CUDA_HOME, else the one found at build time)
  bool verbose = false;
  exit_status exit = exit_status::ok;

  [[nodiscard]] std::filesystem::path suite_dir() const { return root / "suite"; }
  [[nodiscard]] std::filesystem::path packs_dir() const { return root / "packs"; }
};

/// Fills a context from environment variables and compiled-in defaults.
context make_context();

/// Prints "ptxbench: <message>" on stderr (one line) and returns `code`.
exit_status report_error(const std::string& message, exit_status code);

}  // namespace ptxbench::cli
