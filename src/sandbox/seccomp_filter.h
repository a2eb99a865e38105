#pragma once
// Builds the seccomp filter from syscall_rules() with libseccomp and loads it on every thread of
// the process (SECCOMP_FILTER_FLAG_TSYNC: the CUDA driver's threads already exist).

#include <string>
#include <vector>

#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"

namespace ptxbench::sandbox {

struct seccomp_outcome {
  protection status;
  int rules = 0;                        ///< rules added
  std::vector<std::string> not_on_arch;  ///< table entries this architecture does not have
};

/// Loads the filter. In audit mode every rule logs instead (SECCOMP_RET_LOG), except clone3's
/// ENOSYS, which only steers glibc and is kept so audit runs the same code paths as enforcement.
seccomp_outcome load_seccomp_filter(const sandbox_policy& p);

}  // namespace ptxbench::sandbox
