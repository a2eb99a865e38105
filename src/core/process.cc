#include "core/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>

#include <fmt/format.h>

extern char** environ;

namespace ptxbench {
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGTRAP: return "SIGTRAP";
    case SIGPIPE: return "SIGPIPE";
    case SIGXCPU: return "SIGXCPU";
    default: return fmt::format("signal {}", sig);
  }
}

std::string describe_exit(const process_result& r, double timeout_s) {
  if (!r.started) return "could not start: " + r.start_error;
  if (r.timed_out) return timeout_s > 0 ? fmt::format("timed out after {:g} s", timeout_s) : "timed out";
  if (r.signal != 0) return fmt::format("killed by signal {} ({})", signal_name(r.signal), strsignal(r.signal));
  return fmt::format("exited with code {}", r.exit_code);
}

std::optional<fs::path> find_executable(const std::string& name, const std::vector<fs::path>& extra_dirs) {
  auto usable = [](const fs::path& p) { return ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); };
  if (name.find('/') != std::string::npos) {
    if (usable(name)) return fs::path(name);
    return std::nullopt;
  }
  for (const auto& d : extra_dirs)
    if (usable(d / name)) return d / name;
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::string p = path;
  std::size_t start = 0;
  while (start <= p.size()) {
    auto end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    fs::path dir = p.substr(start, end - start);
    if (!dir.empty() && usable(dir / name)) return dir / name;
    start = end + 1;
  }
  return std::nullopt;
}

namespace {

std::vector<std::string> build_environment(const process_spec& spec) {
  std::set<std::string> drop(spec.env_unset.begin(), spec.env_unset.end());
  for (const auto& [k, v] : spec.env_overrides) drop.insert(k);
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos && drop.count(kv.substr(0, eq))) continue;
    env.push_back(std::move(kv));
  }
  for (const auto& [k, v] : spec.env_overrides) env.push_back(k + "=" + v);
  return env;
}

void append_capped(std::string& dst, bool& truncated, const char* buf, std::size_t n, std::size_t cap) {
  if (dst.size() >= cap) { truncated = true; return; }
  std::size_t take = std::min(n, cap - dst.size());
  dst.append(buf, take);
  if (take < n) truncated = true;
}

}  // namespace

process_result run_process(const process_spec& spec) {
  process_result r;
  if (spec.argv.empty()) { r.start_error = "empty command"; return r; }
  auto exe = find_executable(spec.argv[0]);
  if (!exe) { r.start_error = fmt::format("'{}' not found", spec.argv[0]); return r; }

  // Everything the child touches is prepared before fork: only async-signal-safe calls follow it.
  std::vector<std::string> env = build_environment(spec);
  std::vector<char*> argv_c, env_c;
  for (const auto& a : spec.argv) argv_c.push_back(const_cast<char*>(a.c_str()));
  argv_c.push_back(nullptr);
  for (const auto& e : env) env_c.push_back(const_cast<char*>(e.c_str()));
  env_c.push_back(nullptr);
  std::string exe_str = exe->string(), cwd_str = spec.cwd.string();

  int out_pipe[2], err_pipe[2], err_report[2];
  if (::pipe2(out_pipe, O_CLOEXEC) || ::pipe2(err_pipe, O_CLOEXEC) || ::pipe2(err_report, O_CLOEXEC)) {
    r.start_error = std::strerror(errno);
    return r;
  }
  auto start = clock_type::now();
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) { r.start_error = std::strerror(errno); return r; }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(spec.merge_stderr ? out_pipe[1] : err_pipe[1], STDERR_FILENO);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    if (!cwd_str.empty() && ::chdir(cwd_str.c_str()) != 0) {
      int e = errno;
      (void)!::write(err_report[1], &e, sizeof e);
      ::_exit(127);
    }
    ::execve(exe_str.c_str(), argv_c.data(), env_c.data());
    int e = errno;
    (void)!::write(err_report[1], &e, sizeof e);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so the group exists before we might kill it
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(err_report[1]);
  int child_errno = 0;
  if (::read(err_report[0], &child_errno, sizeof child_errno) == sizeof child_errno) {
    ::close(err_report[0]);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    ::waitpid(pid, nullptr, 0);
    r.start_error = fmt::format("{}: {}", exe_str, std::strerror(child_errno));
    return r;
  }
  ::close(err_report[0]);
  r.started = true;

  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  bool killed = false;
  auto deadline = start + std::chrono::duration<double>(spec.timeout_s);
  char buf[65536];
  while (open_fds > 0) {
    int wait_ms = -1;
    if (spec.timeout_s > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
      if (left <= 0) {
        if (!killed) {
          r.timed_out = true;
          ::kill(-pid, SIGKILL);
          killed = true;
        }
        wait_ms = 200;  // keep draining what the dying group still writes
        deadline = clock_type::now() + std::chrono::seconds(3600);
      } else {
        wait_ms = static_cast<int>(std::min<long long>(left, 1000));
      }
    }
    int n = ::poll(fds, 2, wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (n == 0 && killed) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      if (i == 0) append_capped(r.out, r.out_truncated, buf, static_cast<std::size_t>(got), spec.max_output_bytes);
      else append_capped(r.err, r.err_truncated, buf, static_cast<std::size_t>(got), spec.max_output_bytes);
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);

  int wstatus = 0;
  while (true) {
    pid_t w = ::waitpid(pid, &wstatus, spec.timeout_s > 0 && !killed ? WNOHANG : 0);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (w == 0) {
      if (clock_type::now() >= deadline) {
        r.timed_out = true;
        ::kill(-pid, SIGKILL);
        killed = true;
      } else {
        ::usleep(2000);
      }
    }
  }
  if (killed) ::kill(-pid, SIGKILL);  // descendants that outlived the leader
  if (WIFEXITED(wstatus)) r.exit_code = WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) r.signal = WTERMSIG(wstatus);
  r.wall_s = std::chrono::duration<double>(clock_type::now() - start).count();
  return r;
}

}  // namespace ptxbench
