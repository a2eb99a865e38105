#pragma once
// Resource limits of the candidate process: open files, file size (the runner's log included), no
// core dumps, and, where the policy asks (the trusted Triton recompile), CPU time and data memory. Soft and hard limits both, so the candidate cannot raise them again (as root it could
// raise even hard limits; the filter refuses setrlimit/prlimit64 with a new value).

#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"

namespace ptxbench::sandbox {

/// Sets RLIMIT_NOFILE (never below what is open + 64), RLIMIT_FSIZE and RLIMIT_CORE, and RLIMIT_CPU
/// (hard limit 5 s above, so the soft one ends the process with SIGXCPU) and RLIMIT_DATA where the
/// policy sets them. RLIMIT_NPROC is
/// left alone and the detail says why: it counts every process of the user (for root it is not
/// enforced at all), not the runner's threads; new processes are refused by the filter instead.
protection apply_resource_limits(const resource_limits& limits);

}  // namespace ptxbench::sandbox
