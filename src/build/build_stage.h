#pragma once
// The build stage: exactly one nvcc invocation per candidate, content-addressed. The shared object
// and cubin it produces are what the static SASS check disassembles and what the GPU runner loads;
// the compiler log returned is that same build's log.

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "build/compiler_log.h"
#include "build/toolchain.h"
#include "core/result.h"
#include "suite/solution.h"

namespace ptxbench::build {

struct build_request {
  std::vector<source_file> sources;                    ///< .cu files are compiled; others are headers
  std::string gencode;                                 ///< e.g. "arch=compute_90a,code=sm_90a"
  std::vector<std::filesystem::path> include_dirs;     ///< the ABI header dir, the target's pack
  std::filesystem::path cache_dir;                     ///< builds live in cache_dir/builds/<key>/
  double timeout_s = 180;
};

enum class build_outcome { built, compile_error, timeout };

struct build_result {
  build_outcome outcome = build_outcome::compile_error;
  bool cache_hit = false;
  std::string key;                                    ///< sha256 of everything that determines the output
  std::filesystem::path dir;                          ///< the cache entry
  std::filesystem::path shared_object;                ///< dir/candidate.so when built
  std::vector<std::filesystem::path> cubins;          ///< device code kept from the same build
  std::vector<std::string> command;                   ///< the nvcc argv (paths relative to the entry)
  std::string nvcc_version;
  double compile_seconds = 0;                         ///< of the original build (0 on a hit is not used)
  double seconds = 0;                                 ///< this call: lookup (hit) or compile (miss)
  compiler_log log;
};

/// The nvcc flags of a build, before sources and outputs (shown in docs and verdicts).
std::vector<std::string> nvcc_flags(const std::string& gencode);

/// Builds the sources, or returns the cached result of an identical earlier build. A hit is used
/// only when every file of the entry still has the sha256 recorded when it was built; otherwise
/// the entry is rebuilt. Identical builds at once run nvcc once: the others wait for the key's
/// lock (cache_dir/locks/<key>.lock, bounded by the timeout) and take the entry. Each build
/// works in cache_dir/tmp/build-*, holding that folder's .lock while it runs; a miss first removes
/// the folders of killed builds (older than 10 minutes and held by nobody).
/// An error means the build could not be attempted (cache not writable, nvcc would not start);
/// a candidate that does not compile is a build_result with outcome compile_error.
result<build_result> build_candidate(const build_request& request, const toolchain& tc);

/// Removes cache_dir/tmp/build-* folders older than `older_than` whose .lock no live process holds
/// (a killed build's leftovers). Returns the folders removed.
std::vector<std::filesystem::path> clean_stale_build_folders(const std::filesystem::path& cache_dir,
                                                             std::chrono::seconds older_than);

}  // namespace ptxbench::build
