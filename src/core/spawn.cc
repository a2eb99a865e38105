#include "core/spawn.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/process.h"

namespace ptxbench {

namespace {

// PR_SET_PDEATHSIG fires when the *thread* that forked the child ends, not the process. A harness
// started by one of an agent sweep's worker threads was SIGKILLed the moment that thread ran out of
// trajectories, while the other threads still evaluated through it ("the harness is gone"). So a child
// with a parent-death signal is forked by this thread, which lives as long as the process: the signal
// then means what the caller asked for, "the process died".
class process_lifetime_spawner {
 public:
  process_lifetime_spawner() : m_owner(::getpid()) { std::thread([this] { loop(); }).detach(); }

  result<pid_t> run(std::function<result<pid_t>()> work) {
    std::packaged_task<result<pid_t>()> task(std::move(work));
    auto done = task.get_future();
    {
      std::lock_guard lock(m_mutex);
      m_queue.push_back(std::move(task));
    }
    m_wake.notify_one();
    return done.get();
  }

  [[nodiscard]] pid_t owner() const { return m_owner; }

 private:
  void loop() {
    // Signals sent to the process are handled by the threads that expect them, never here.
    sigset_t all;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
    for (;;) {
      std::unique_lock lock(m_mutex);
      m_wake.wait(lock, [&] { return !m_queue.empty(); });
      auto task = std::move(m_queue.front());
      m_queue.pop_front();
      lock.unlock();
      task();
    }
  }

  pid_t m_owner;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::deque<std::packaged_task<result<pid_t>()>> m_queue;
};

process_lifetime_spawner& spawner() {
  // Never destroyed (its thread may still wait at exit), and made again in a forked child, which has
  // the pointer but not the thread.
  static std::atomic<process_lifetime_spawner*> the{nullptr};
  static std::mutex making;
  auto* s = the.load();
  if (s && s->owner() == ::getpid()) return *s;
  std::lock_guard lock(making);
  s = the.load();
  if (!s || s->owner() != ::getpid()) {
    s = new process_lifetime_spawner();
    the.store(s);
  }
  return *s;
}

result<pid_t> fork_and_exec(const background_spec& spec);

}  // namespace

result<pid_t> spawn_background(const background_spec& spec) {
  if (spec.argv.empty()) return make_error("spawn: no program");
  if (spec.parent_death_signal == 0) return fork_and_exec(spec);
  return spawner().run([&spec] { return fork_and_exec(spec); });
}

namespace {

result<pid_t> fork_and_exec(const background_spec& spec) {
  std::vector<char*> args;
  for (const auto& a : spec.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int log_fd = -1;
  if (!spec.log.empty()) {
    log_fd = ::open(spec.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) return make_error(fmt::format("spawn: cannot open {}: {}", spec.log.string(), std::strerror(errno)));
  }
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    if (log_fd >= 0) ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    return make_error(std::string("spawn: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // In the child: only async-signal-safe calls from here on. The child starts with no blocked
    // signal, whatever the forking thread had blocked (the mask survives execve).
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (spec.new_group) ::setsid();
    if (spec.parent_death_signal) {
      ::prctl(PR_SET_PDEATHSIG, spec.parent_death_signal);
      if (::getppid() != parent) ::_exit(126);  // the parent died before the signal was armed
    }
    if (null_fd >= 0) ::dup2(null_fd, 0);
    if (log_fd >= 0) {
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
    }
    // Move the passed descriptors out of the way first, so mapping a → 3 cannot clobber b = 3.
    int moved[16];
    std::size_t n = spec.fds.size() < 16 ? spec.fds.size() : 16;
    for (std::size_t i = 0; i < n; ++i) moved[i] = ::fcntl(spec.fds[i].first, F_DUPFD, 64);
    for (std::size_t i = 0; i < n; ++i) {
      ::dup2(moved[i], spec.fds[i].second);  // dup2 clears close-on-exec on the new number
      ::close(moved[i]);
    }
    // Close everything else above stderr that is not a passed number (descriptors a library opened
    // without O_CLOEXEC must not leak into the child).
    int highest_kept = 2;
    for (std::size_t i = 0; i < n; ++i) highest_kept = spec.fds[i].second > highest_kept ? spec.fds[i].second : highest_kept;
    for (int fd = 3; fd < highest_kept; ++fd) {
      bool keep = false;
      for (std::size_t i = 0; i < n; ++i) keep = keep || spec.fds[i].second == fd;
      if (!keep) ::close(fd);
    }
    if (::close_range(static_cast<unsigned>(highest_kept) + 1, ~0u, 0) != 0) {
      for (int fd = highest_kept + 1; fd < 4096; ++fd) ::close(fd);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  if (log_fd >= 0) ::close(log_fd);
  if (null_fd >= 0) ::close(null_fd);
  return pid;
}

}  // namespace

std::optional<int> reap_if_exited(pid_t pid) {
  int st = 0;
  pid_t r = ::waitpid(pid, &st, WNOHANG);
  if (r == pid) return st;
  if (r < 0 && errno == ECHILD) return 0;  // already reaped elsewhere
  return std::nullopt;
}

int stop_child(pid_t pid, int sig, int grace_ms) {
  if (pid <= 0) return 0;
  bool leader = ::getpgid(pid) == pid;
  ::kill(leader ? -pid : pid, sig);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  for (;;) {
    if (auto st = reap_if_exited(pid)) {
      if (leader) ::kill(-pid, SIGKILL);  // anything the child left in its group
      return *st;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(leader ? -pid : pid, SIGKILL);
  int st = 0;
  ::waitpid(pid, &st, 0);
  return st;
}

std::string describe_wait_status(int st) {
  if (WIFSIGNALED(st)) return fmt::format("killed by signal {} ({})", signal_name(WTERMSIG(st)), strsignal(WTERMSIG(st)));
  if (WIFEXITED(st)) return fmt::format("exited with code {}", WEXITSTATUS(st));
  return "stopped";
}

}  // namespace ptxbench
