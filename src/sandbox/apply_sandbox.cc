#include "sandbox/apply_sandbox.h"

#include <sys/prctl.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "sandbox/capabilities.h"
#include "sandbox/landlock_rules.h"
#include "sandbox/network_namespace.h"
#include "sandbox/resource_limits.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/violation_reporter.h"

namespace ptxbench::sandbox {
namespace {

const protection* find_protection(const sandbox_report& r, const std::string& name) {
  if (name == "no_new_privs") return &r.no_new_privs;
  if (name == "seccomp") return &r.seccomp;
  if (name == "landlock") return &r.landlock;
  if (name == "network_namespace") return &r.network_namespace;
  if (name == "capabilities") return &r.capabilities;
  if (name == "rlimits") return &r.rlimits;
  return nullptr;
}

bool is_disabled(const sandbox_policy& p, const char* name) {
  for (const auto& d : p.disabled)
    if (d == name) return true;
  return false;
}

protection disabled_protection() {
  protection p;
  p.reason = "disabled by the policy (diagnosis only)";
  return p;
}

}  // namespace

result<sandbox_report> apply_sandbox(const sandbox_policy& policy) {
  std::error_code ec;
  if (policy.scratch_dir.empty() || !std::filesystem::is_directory(policy.scratch_dir, ec))
    return make_error(fmt::format("sandbox: the scratch folder '{}' does not exist", policy.scratch_dir.string()));

  sandbox_report r;
  r.mode = to_string(policy.mode);
  r.tool = to_string(policy.tool);
  r.mount_namespace.reason =
      "not used: Landlock confines writes to the scratch folder without remounting, and a mount namespace "
      "cannot be entered by a multithreaded process (the CUDA driver's threads exist by now)";
  r.user_namespace.reason =
      "not used: unshare(CLONE_NEWUSER) needs a single-threaded process, and the runner is root on the GPU host "
      "(capabilities are dropped instead)";

  if (auto st = install_violation_handlers(policy.violation_fd, policy.limits.file_size_bytes); !st)
    return st.err().with_context("sandbox");

  r.rlimits = apply_resource_limits(policy.limits);

  if (policy.allow_network) {
    r.network_namespace.reason = "the policy allows the network";
  } else if (policy.tool != tool_mode::none) {
    r.network_namespace.reason =
        "not entered under a tool: its injected library talks to the front end over TCP loopback (Nsight "
        "Compute: ports 49152+); the harness can start the whole tool in a private namespace instead "
        "(enter_private_network)";
  } else if (is_disabled(policy, "network_namespace")) {
    r.network_namespace = disabled_protection();
  } else {
    r.network_namespace = enter_network_namespace();
  }

  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) {
    r.no_new_privs.active = true;
    r.no_new_privs.detail = "no set-user-ID or file-capability gains, for every thread";
  } else {
    r.no_new_privs.reason = fmt::format("prctl(PR_SET_NO_NEW_PRIVS) failed: {}", std::strerror(errno));
  }

  if (is_disabled(policy, "landlock")) {
    r.landlock = disabled_protection();
  } else if (r.no_new_privs.active) {
    auto ll = apply_landlock(policy);
    r.landlock = ll.status;
    r.landlock_abi = ll.abi;
    r.landlock_network = ll.network;
    r.landlock_scoped = ll.scoped;
    r.threads_outside_landlock = ll.threads_outside;
    r.skipped_paths = ll.skipped_paths;
  } else {
    r.landlock.reason = "needs no_new_privs";
  }

  r.capabilities = is_disabled(policy, "capabilities") ? disabled_protection() : drop_capabilities(policy.tool);

  if (is_disabled(policy, "seccomp")) {
    r.seccomp = disabled_protection();
  } else {
    auto sc = load_seccomp_filter(policy);
    r.seccomp = sc.status;
    r.seccomp_rules = sc.rules;
  }

  if (policy.tool != tool_mode::none)
    r.weakened.push_back(
        "under a tool, network and signal system calls fail (EACCES/EPERM) instead of ending the run, and "
        "Landlock leaves TCP and signals alone: the tool's injected library shares the process");
  for (const auto& p : policy.extra_write_paths)
    r.weakened.push_back(fmt::format("writable beyond scratch: {}", p.string()));
  for (const auto& d : policy.disabled) r.weakened.push_back("disabled by the policy: " + d);
  if (policy.mode == enforcement::audit)
    r.weakened.push_back("audit mode: the system call filter only logs (never for an evaluation)");

  for (const auto& name : policy.required) {
    const protection* p = find_protection(r, name);
    if (!p) return make_error(fmt::format("sandbox: unknown required protection '{}'", name));
    if (!p->active) return make_error(fmt::format("sandbox: {} is required but unavailable: {}", name, p->reason));
  }
  return r;
}

}  // namespace ptxbench::sandbox
