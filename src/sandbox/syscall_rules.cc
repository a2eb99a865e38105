#include "sandbox/syscall_rules.h"

#include <cerrno>

namespace ptxbench::sandbox {

const std::vector<syscall_rule>& syscall_rules() {
  using A = rule_action;
  using C = rule_condition;
  using G = rule_category;
  // Trap: an attempt with no innocent reading (a kernel candidate never starts programs, opens
  // network connections or touches other processes); the evaluation ends with RUNTIME_ERROR naming
  // it. Fail: calls a library might probe harmlessly (keyrings, perf, metadata changes); refusing is
  // enough, and ending the run would punish an honest candidate for a library's probing.
  static const std::vector<syscall_rule> rules = {
      // New programs and processes. Threads stay allowed: the CUDA driver creates them.
      {"execve", C::always, A::trap, 0, G::process, "no new programs"},
      {"execveat", C::always, A::trap, 0, G::process, "no new programs"},
      {"fork", C::always, A::trap, 0, G::process, "no new processes"},
      {"vfork", C::always, A::trap, 0, G::process, "no new processes"},
      {"clone", C::clone_new_process, A::trap, 0, G::process, "no new processes (clone without CLONE_THREAD)"},
      {"clone", C::clone_new_namespace, A::trap, 0, G::process, "no namespaces"},
      {"clone3", C::always, A::enosys, ENOSYS, G::process,
       "its flags sit in memory the filter cannot read; ENOSYS makes glibc create threads with clone"},
      // Network: no socket of any family; the harness channel was connected before the sandbox.
      {"socket", C::socket_not_unix, A::trap, 0, G::network, "no network"},
      {"socket", C::socket_unix, A::fail, EACCES, G::network,
       "no new local sockets (libraries may probe nscd/syslog; failing is enough)"},
      {"socketpair", C::always, A::fail, EACCES, G::network, "no new sockets"},
      {"connect", C::always, A::trap, 0, G::network, "no connections"},
      {"bind", C::always, A::trap, 0, G::network, "no listening"},
      {"listen", C::always, A::trap, 0, G::network, "no listening"},
      {"accept", C::always, A::trap, 0, G::network, "no listening"},
      {"accept4", C::always, A::trap, 0, G::network, "no listening"},
      // io_uring performs opens, connects and sockets without passing through this filter.
      {"io_uring_setup", C::always, A::trap, 0, G::kernel, "io_uring bypasses system call filters"},
      {"io_uring_enter", C::always, A::trap, 0, G::kernel, "io_uring bypasses system call filters"},
      {"io_uring_register", C::always, A::trap, 0, G::kernel, "io_uring bypasses system call filters"},
      // Other processes: no tracing, no memory access, no signals (signals to itself are fine: abort()).
      {"ptrace", C::always, A::trap, 0, G::tracing, "no tracing"},
      {"process_vm_readv", C::always, A::trap, 0, G::tracing, "no access to other processes' memory"},
      {"process_vm_writev", C::always, A::trap, 0, G::tracing, "no access to other processes' memory"},
      {"pidfd_getfd", C::always, A::trap, 0, G::tracing, "no stealing other processes' files"},
      {"pidfd_open", C::arg0_not_self, A::trap, 0, G::signal, "no handles on other processes"},
      {"pidfd_send_signal", C::always, A::trap, 0, G::signal, "no signals to other processes"},
      {"kill", C::arg0_not_self, A::trap, 0, G::signal, "no signals to other processes or groups"},
      {"tkill", C::arg0_not_self, A::trap, 0, G::signal, "no signals to other processes"},
      {"tgkill", C::arg0_not_self, A::trap, 0, G::signal, "no signals to other processes"},
      {"rt_sigqueueinfo", C::arg0_not_self, A::trap, 0, G::signal, "no signals to other processes"},
      {"rt_tgsigqueueinfo", C::arg0_not_self, A::trap, 0, G::signal, "no signals to other processes"},
      {"rt_sigaction", C::sigaction_sigsys, A::trap, 0, G::signal, "the violation handler cannot be replaced"},
      {"kcmp", C::always, A::fail, EPERM, G::tracing, "no inspection of other processes"},
      // Namespaces, mounts and the root: as root these would undo every other protection.
      {"unshare", C::always, A::trap, 0, G::mounts, "no namespaces"},
      {"setns", C::always, A::trap, 0, G::mounts, "no namespaces"},
      {"mount", C::always, A::trap, 0, G::mounts, "no mounts"},
      {"umount2", C::always, A::trap, 0, G::mounts, "no mounts"},
      {"pivot_root", C::always, A::trap, 0, G::mounts, "no mounts"},
      {"chroot", C::always, A::trap, 0, G::mounts, "no mounts"},
      {"open_tree", C::always, A::trap, 0, G::mounts, "no mounts"},
      {"move_mount", C::always, A::trap, 0, G::mounts, "no mounts"},
      {"fsopen", C::always, A::trap, 0, G::mounts, "no mounts"},
      {"fsconfig", C::always, A::trap, 0, G::mounts, "no mounts"},
      {"fsmount", C::always, A::trap, 0, G::mounts, "no mounts"},
      {"fspick", C::always, A::trap, 0, G::mounts, "no mounts"},
      {"mount_setattr", C::always, A::trap, 0, G::mounts, "no mounts"},
      {"open_by_handle_at", C::always, A::trap, 0, G::mounts, "opens files by handle, around path checks"},
      // The kernel itself.
      {"bpf", C::always, A::trap, 0, G::kernel, "no kernel programs"},
      {"init_module", C::always, A::trap, 0, G::kernel, "no kernel modules"},
      {"finit_module", C::always, A::trap, 0, G::kernel, "no kernel modules"},
      {"delete_module", C::always, A::trap, 0, G::kernel, "no kernel modules"},
      {"kexec_load", C::always, A::trap, 0, G::kernel, "no new kernels"},
      {"kexec_file_load", C::always, A::trap, 0, G::kernel, "no new kernels"},
      {"reboot", C::always, A::trap, 0, G::kernel, "no reboots"},
      {"iopl", C::always, A::trap, 0, G::kernel, "no port I/O"},
      {"ioperm", C::always, A::trap, 0, G::kernel, "no port I/O"},
      {"swapon", C::always, A::trap, 0, G::kernel, "no swap changes"},
      {"swapoff", C::always, A::trap, 0, G::kernel, "no swap changes"},
      {"acct", C::always, A::fail, EPERM, G::kernel, "no process accounting"},
      {"perf_event_open", C::always, A::fail, EACCES, G::kernel,
       "no performance counters of other processes (as root it could watch the harness)"},
      {"keyctl", C::always, A::fail, EPERM, G::kernel, "no kernel keyrings"},
      {"add_key", C::always, A::fail, EPERM, G::kernel, "no kernel keyrings"},
      {"request_key", C::always, A::fail, EPERM, G::kernel, "no kernel keyrings"},
      {"syslog", C::always, A::fail, EPERM, G::kernel, "no kernel log"},
      {"userfaultfd", C::always, A::fail, EPERM, G::kernel, "a classic exploit primitive"},
      {"personality", C::personality_change, A::fail, EPERM, G::kernel, "no execution-domain changes"},
      {"sethostname", C::always, A::fail, EPERM, G::kernel, "no host changes"},
      {"setdomainname", C::always, A::fail, EPERM, G::kernel, "no host changes"},
      {"settimeofday", C::always, A::fail, EPERM, G::kernel, "no clock changes"},
      {"clock_settime", C::always, A::fail, EPERM, G::kernel, "no clock changes"},
      {"seccomp", C::always, A::fail, EPERM, G::kernel,
       "no filters of its own (an ERRNO(0) filter could fake the runner's synchronisation)"},
      {"prctl", C::prctl_set_seccomp, A::fail, EPERM, G::kernel, "no filters of its own"},
      {"prctl", C::prctl_set_mm, A::fail, EPERM, G::kernel, "no rewriting of the memory map's metadata"},
      // File metadata: Landlock governs writes, not permissions, owners or times.
      {"chmod", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover permissions"},
      {"fchmod", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover permissions"},
      {"fchmodat", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover permissions"},
      {"fchmodat2", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover permissions"},
      {"chown", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover owners"},
      {"fchown", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover owners"},
      {"lchown", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover owners"},
      {"fchownat", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover owners"},
      {"setxattr", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover attributes"},
      {"lsetxattr", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover attributes"},
      {"fsetxattr", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover attributes"},
      {"removexattr", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover attributes"},
      {"lremovexattr", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover attributes"},
      {"fremovexattr", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover attributes"},
      {"utime", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover times"},
      {"utimes", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover times"},
      {"futimesat", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover times"},
      {"utimensat", C::always, A::fail, EPERM, G::file_metadata, "Landlock does not cover times"},
      {"mknod", C::always, A::fail, EPERM, G::file_metadata, "no device nodes (Landlock also refuses them)"},
      {"mknodat", C::always, A::fail, EPERM, G::file_metadata, "no device nodes (Landlock also refuses them)"},
      // The limits set before the filter must stay (as root the hard limits could be raised again).
      {"setrlimit", C::always, A::fail, EPERM, G::limits, "the sandbox's limits stay"},
      {"prlimit64", C::prlimit_set, A::fail, EPERM, G::limits, "the sandbox's limits stay"},
  };
  return rules;
}

bool rule_applies(const syscall_rule& r, const sandbox_policy& p) {
  return !(p.allow_network && r.category == rule_category::network);
}

rule_action effective_action(const syscall_rule& r, const sandbox_policy& p, int* error_out) {
  rule_action a = r.action;
  int err = r.error;
  // rt_sigaction(SIGSYS) included: a tool may (re)install handlers for every signal when it first
  // intercepts a launch; failing it keeps the reporting handler without blaming the candidate.
  if (p.tool != tool_mode::none && a == rule_action::trap &&
      (r.category == rule_category::network || r.category == rule_category::signal)) {
    a = rule_action::fail;
    err = r.category == rule_category::network ? EACCES : EPERM;
  }
  if (error_out) *error_out = err;
  return a;
}

std::string to_string(rule_action a) {
  switch (a) {
    case rule_action::trap: return "trap";
    case rule_action::fail: return "fail";
    case rule_action::enosys: return "enosys";
  }
  return "?";
}

std::string to_string(rule_condition c) {
  switch (c) {
    case rule_condition::always: return "always";
    case rule_condition::arg0_not_self: return "target is not this process";
    case rule_condition::socket_not_unix: return "family is not AF_UNIX";
    case rule_condition::socket_unix: return "family is AF_UNIX";
    case rule_condition::clone_new_process: return "without CLONE_THREAD";
    case rule_condition::clone_new_namespace: return "with a CLONE_NEW* flag";
    case rule_condition::sigaction_sigsys: return "SIGSYS with a new action";
    case rule_condition::personality_change: return "a change (not a query)";
    case rule_condition::prlimit_set: return "with a new limit";
    case rule_condition::prctl_set_seccomp: return "PR_SET_SECCOMP";
    case rule_condition::prctl_set_mm: return "PR_SET_MM";
  }
  return "?";
}

std::string to_string(rule_category c) {
  switch (c) {
    case rule_category::process: return "process";
    case rule_category::network: return "network";
    case rule_category::signal: return "signal";
    case rule_category::tracing: return "tracing";
    case rule_category::mounts: return "mounts";
    case rule_category::kernel: return "kernel";
    case rule_category::file_metadata: return "file_metadata";
    case rule_category::limits: return "limits";
  }
  return "?";
}

}  // namespace ptxbench::sandbox
