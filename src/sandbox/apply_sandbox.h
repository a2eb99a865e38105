#pragma once
// The one call the runner makes: confine this process as the policy says and report what is in
// force. Call it after the harness connection and the CUDA context exist (both need things the
// sandbox then refuses: a new socket, opening the GPU devices, ...) and BEFORE the candidate's
// shared object is opened (its static constructors run inside dlopen).
//
// Order matters: the violation handlers first (the filter then forbids replacing them), the
// resource limits, the network namespace (needs CAP_SYS_ADMIN), no_new_privs, Landlock, the
// capability drop, and the seccomp filter last (it refuses unshare, which the namespace step uses).

#include "core/result.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"

namespace ptxbench::sandbox {

/// Applies the policy. An error means the process could not be confined as policy.required
/// demands (or the policy is unusable); it may be partly confined then, and must not load the
/// candidate. Protections not in policy.required may be off; the report says why.
result<sandbox_report> apply_sandbox(const sandbox_policy& policy);

}  // namespace ptxbench::sandbox
