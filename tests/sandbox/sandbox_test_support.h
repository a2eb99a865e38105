#pragma once
// Runs a piece of code in a forked child after apply_sandbox(), and collects how the child ended
// and what it wrote (the violation handler's line, or the body's own "ok"/"errno N" line).

#include <filesystem>
#include <functional>
#include <string>

#include "sandbox/sandbox_policy.h"

namespace ptxbench::sandbox::testing {

struct child_result {
  int exit_code = -1;  ///< -1 when killed by a signal
  int signal = 0;      ///< the killing signal, 0 when it exited
  std::string output;  ///< everything written to the violation fd
};

/// A temporary folder tree for one test: scratch/, a "build cache" and a "run dir" outside it, and
/// a readable folder. Removed on destruction.
class sandbox_dirs {
 public:
  sandbox_dirs();
  ~sandbox_dirs();
  std::filesystem::path root, scratch, cache, run_dir, readable, unreadable;
};

/// A policy for the tests: scratch as given, the system folders and `readable` to read.
sandbox_policy test_policy(const sandbox_dirs& d);

/// Forks; the child applies `policy` (violation_fd replaced by a pipe), runs body(fd) and exits 0.
/// If apply_sandbox fails the child writes "apply failed: ..." and exits 99.
child_result run_sandboxed(sandbox_policy policy, const std::function<void(int fd)>& body);

/// Helpers for bodies: write "ok\n" or "errno N\n" to fd depending on rc.
void report(int fd, long rc);
std::string errno_line(int e);

/// True when this kernel has Landlock; reason otherwise.
bool landlock_available(std::string* reason);

}  // namespace ptxbench::sandbox::testing
