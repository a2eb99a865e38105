#include "child_process.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace ptxbench::testing {

pid_t spawn_process(const std::vector<std::string>& argv, const std::filesystem::path& log, bool new_group,
                    std::optional<run_as_user> as_user, int parent_death_signal) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid != 0) return pid;
  // In the child: only async-signal-safe calls from here on.
  if (new_group) setsid();
  int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
  }
  int null = open("/dev/null", O_RDONLY);
  if (null >= 0) dup2(null, 0);
  if (as_user && (setgroups(0, nullptr) != 0 || setgid(as_user->gid) != 0 || setuid(as_user->uid) != 0)) _exit(126);
  // After the user switch: changing credentials clears the parent-death signal.
  if (parent_death_signal) prctl(PR_SET_PDEATHSIG, parent_death_signal);
  execv(args[0], args.data());
  _exit(127);
}

int kill_and_reap(pid_t pid, int sig) {
  int st = 0;
  kill(pid, sig);
  waitpid(pid, &st, 0);
  return st;
}

bool reap_within(pid_t pid, int timeout_ms, int* wait_status) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      if (wait_status) *wait_status = st;
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace ptxbench::testing
