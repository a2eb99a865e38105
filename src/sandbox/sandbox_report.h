#pragma once
// What apply_sandbox() established: for every protection whether it is active and, when it is not,
// why. The verdict records this (environment.sandbox), so a result never claims a protection that
// was not there.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptxbench::sandbox {

struct protection {
  bool active = false;
  std::string detail;  ///< what it covers when active ("all threads", "calling thread and its children")
  std::string reason;  ///< why it is not active (empty when active)
};

struct sandbox_report {
  std::string mode;  ///< "enforce" | "audit"
  std::string tool;  ///< "none" | "compute-sanitizer" | "nsight-compute"
  protection no_new_privs;
  protection seccomp;
  int seccomp_rules = 0;          ///< system calls (or argument patterns) the filter refuses or logs
  protection landlock;
  int landlock_abi = 0;           ///< 0: Landlock not available in this kernel
  bool landlock_network = false;  ///< TCP bind/connect refused by Landlock (ABI >= 4)
  bool landlock_scoped = false;   ///< signals and abstract Unix sockets scoped to the sandbox (ABI >= 6)
  int threads_outside_landlock = 0;  ///< threads that existed before (Landlock ABI < 8 confines only the caller)
  protection network_namespace;
  protection capabilities;
  protection rlimits;
  protection mount_namespace;     ///< not used; the report says why
  protection user_namespace;      ///< not used; the report says why
  std::vector<std::string> skipped_paths;  ///< policy paths that did not exist
  std::vector<std::string> weakened;       ///< what a tool mode or an extra write path gives up
};

nlohmann::ordered_json to_json(const protection& p);
nlohmann::ordered_json to_json(const sandbox_report& r);

/// One line for logs: "sandbox: seccomp on, landlock ABI 7 (...), ..., network namespace off (why)".
std::string summary(const sandbox_report& r);

}  // namespace ptxbench::sandbox
