#pragma once
// The system calls the candidate's sandbox refuses, one row each, with what happens and why. The
// filter (seccomp_filter.cc) is built from this table, docs/sandbox.md explains it, and the tests
// walk it, so the three cannot drift apart.
//
// The filter is a deny list on top of "allow": the CUDA driver, CUPTI and the tools' injected
// libraries make hundreds of different system calls (ioctl on the GPU devices, mmap, futex, ...)
// that change between driver versions; an allow list would break evaluations on every driver
// update, while the calls below have no use in a kernel candidate.

#include <string>
#include <vector>

#include "sandbox/sandbox_policy.h"

namespace ptxbench::sandbox {

/// What the kernel does when a rule matches.
enum class rule_action {
  trap,     ///< SIGSYS: the runner's handler reports "attempted <call>" and ends the process (RUNTIME_ERROR)
  fail,     ///< the call returns -1 with `error` and evaluation continues
  enosys,   ///< the call returns ENOSYS, so glibc falls back to an older call the filter can inspect
};

/// Which arguments a rule looks at. Argument tests compare whole 64-bit registers where a
/// mismatch only makes the rule stricter, and the low 32 bits where the kernel itself truncates
/// (so high garbage bits cannot slip past the rule).
enum class rule_condition {
  always,
  arg0_not_self,         ///< pid/tgid argument is not this process (kill, tgkill, ...)
  socket_not_unix,       ///< socket(family != AF_UNIX, ...)
  socket_unix,           ///< socket(AF_UNIX, ...)
  clone_new_process,     ///< clone without CLONE_THREAD: fork in disguise
  clone_new_namespace,   ///< clone with any CLONE_NEW* flag
  sigaction_sigsys,      ///< rt_sigaction(SIGSYS, act != NULL): replacing the reporting handler
  personality_change,    ///< personality(x) with x != 0xffffffff (a query)
  prlimit_set,           ///< prlimit64(..., new != NULL, ...): raising a limit back
  prctl_set_seccomp,     ///< prctl(PR_SET_SECCOMP, ...)
  prctl_set_mm,          ///< prctl(PR_SET_MM, ...): rewriting the process's own memory map metadata
};

enum class rule_category { process, network, signal, tracing, mounts, kernel, file_metadata, limits };

struct syscall_rule {
  const char* syscall;  ///< libseccomp's name
  rule_condition condition;
  rule_action action;
  int error;            ///< errno for rule_action::fail / enosys
  rule_category category;
  const char* why;
};

/// The table for the native architecture (x86_64, aarch64). Calls the architecture lacks (fork on
/// aarch64) are skipped by the filter builder, and listed in its result.
const std::vector<syscall_rule>& syscall_rules();

/// False for the network rules when the policy allows the network (only tests do).
bool rule_applies(const syscall_rule& r, const sandbox_policy& p);

/// The action a rule takes under a policy: in a tool mode, traps on network and signal calls become
/// plain failures (EACCES / EPERM), because the tool's injected library shares the process and a
/// trap would blame the candidate for the tool's own call. Refused either way.
rule_action effective_action(const syscall_rule& r, const sandbox_policy& p, int* error_out);

std::string to_string(rule_action a);
std::string to_string(rule_condition c);
std::string to_string(rule_category c);

}  // namespace ptxbench::sandbox
