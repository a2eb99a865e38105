#include "sandbox_test_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "sandbox/apply_sandbox.h"
#include "sandbox/landlock_rules.h"

namespace ptxbench::sandbox::testing {
namespace fs = std::filesystem;

sandbox_dirs::sandbox_dirs() {
  std::random_device rd;
  root = fs::temp_directory_path() / ("ptxbench-sandbox-test-" + std::to_string(rd()));
  scratch = root / "scratch";
  cache = root / "cache";
  run_dir = root / "runs" / "run-1";
  readable = root / "readable";
  unreadable = root / "unreadable";
  for (const auto& d : {scratch, cache, run_dir, readable, unreadable}) fs::create_directories(d);
}

sandbox_dirs::~sandbox_dirs() {
  std::error_code ec;
  fs::remove_all(root, ec);
}

sandbox_policy test_policy(const sandbox_dirs& d) {
  sandbox_policy p;
  p.scratch_dir = d.scratch;
  p.read_paths = {"/usr", "/lib", "/lib64", "/etc", "/proc/self", d.readable};
  p.required = {"no_new_privs", "seccomp", "rlimits"};
  return p;
}

child_result run_sandboxed(sandbox_policy policy, const std::function<void(int fd)>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    policy.violation_fd = fds[1];
    auto r = apply_sandbox(policy);
    if (!r) {
      std::string line = "apply failed: " + r.err().message + "\n";
      (void)!::write(fds[1], line.data(), line.size());
      ::_exit(99);
    }
    body(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  child_result out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.output.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  return out;
}

std::string errno_line(int e) { return "errno " + std::to_string(e) + "\n"; }

void report(int fd, long rc) {
  std::string line = rc >= 0 ? std::string("ok\n") : errno_line(errno);
  (void)!::write(fd, line.data(), line.size());
}

bool landlock_available(std::string* reason) { return landlock_abi_version(reason) > 0; }

}  // namespace ptxbench::sandbox::testing
