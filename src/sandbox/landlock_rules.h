#pragma once
// Landlock through its raw system calls (glibc has no wrappers and Debian 12's kernel headers stop
// at ABI 2, so the constants are declared in landlock_rules.cc): writes only beneath the scratch
// folder, reads only beneath the read paths, the GPU devices read-write; on ABI >= 4 no TCP bind or
// connect, on ABI >= 6 no signals or abstract Unix sockets outside the sandbox.

#include <string>
#include <vector>

#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"

namespace ptxbench::sandbox {

struct landlock_outcome {
  protection status;
  int abi = 0;
  bool network = false;
  bool scoped = false;
  int threads_outside = 0;
  std::vector<std::string> skipped_paths;
};

/// The kernel's Landlock ABI version; 0 with the reason when there is none.
int landlock_abi_version(std::string* reason = nullptr);

/// Restricts the calling thread and every thread it creates afterwards (all threads of the
/// process on ABI >= 8, where LANDLOCK_RESTRICT_SELF_TSYNC exists). Requires no_new_privs.
landlock_outcome apply_landlock(const sandbox_policy& p);

/// /dev/nvidia* and the harmless character devices every program opens (/dev/null, ...).
std::vector<std::filesystem::path> default_device_paths();

}  // namespace ptxbench::sandbox
