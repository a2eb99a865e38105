#pragma once
// A network namespace of its own for the candidate: no interface but a loopback that is down, so
// no address of the host (loopback included) is reachable even if a socket were created. A second
// layer under the system call filter, which already refuses socket().
//
// Two places can create it:
//  - the runner, after it connected to the harness (an existing socket keeps working in a new
//    namespace, and CUDA IPC goes through the GPU driver, not the network): apply_sandbox() does
//    this. A namespace is a per-thread attribute, so threads that already exist (the CUDA driver's)
//    stay in the host's namespace; the candidate's code runs on the calling thread and its children.
//  - the harness, in the child between fork and exec (enter_private_network): then the whole
//    process tree is inside, threads included. Under a tool the tool's front end is inside too and
//    talks to its injected library over the namespace's own loopback, which this brings up.

#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"

namespace ptxbench::sandbox {

/// For apply_sandbox: unshare(CLONE_NEWNET) for the calling thread. Needs CAP_SYS_ADMIN (root on
/// the GPU host); a user namespace cannot help after CUDA started threads (unshare(CLONE_NEWUSER)
/// needs a single-threaded process), so without it the report says so.
protection enter_network_namespace();

/// For the harness's child between fork and exec (async-signal-safe: system calls only). Returns 0
/// or an errno. loopback_up: bring `lo` up inside (for a tool's front end and its injected library).
int enter_private_network(bool loopback_up) noexcept;

}  // namespace ptxbench::sandbox
