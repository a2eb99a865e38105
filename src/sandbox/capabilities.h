#pragma once
// Drops every capability (effective, permitted, inheritable, ambient, bounding) of the calling
// thread. The runner runs as root on the GPU host, where CAP_SYS_ADMIN, CAP_DAC_OVERRIDE,
// CAP_SYS_PTRACE ... would otherwise make the candidate as strong as the harness. Capabilities are
// per thread: threads that already exist keep theirs (the system call filter covers those).

#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"

namespace ptxbench::sandbox {

/// Not under Nsight Compute: its performance counters need CAP_SYS_ADMIN when the driver restricts
/// profiling to administrators (the default, NVreg_RestrictProfilingToAdminUsers=1), and the
/// check happens on the thread that launches the kernel.
protection drop_capabilities(tool_mode tool);

}  // namespace ptxbench::sandbox
