#include "service_processes.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "child_process.h"
#include "test_support.h"

namespace ptxbench::testing {

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

service_processes::service_processes(process_options options) : m_options(std::move(options)), m_port(free_port()) {}

service_processes::~service_processes() {
  if (m_server > 0) kill_and_reap(m_server, SIGKILL);
  for (auto& w : m_workers)
    if (w.pid > 0) {
      ::kill(w.pid, SIGCONT);
      kill_and_reap(w.pid, SIGKILL);
    }
}

std::vector<std::string> service_processes::common_args() const {
  return {(bin_dir() / "ptxbench").string(), "--root", repo_root().string(), "--cache-dir", (m_options.dir / "cache").string()};
}

void service_processes::start_server() {
  auto argv = common_args();
  // The workers start beside the server and register a moment later: the default target is named
  // rather than taken from them, so the first submissions do not race their registration.
  argv.insert(argv.end(), {"serve", "--listen", fmt::format("127.0.0.1:{}", m_port), "--queue", m_options.queue,
                           "--no-local-workers", "--threads", "32", "--target", "h200"});
  argv.insert(argv.end(), m_options.timing.begin(), m_options.timing.end());
  argv.insert(argv.end(), m_options.serve_args.begin(), m_options.serve_args.end());
  ++m_server_starts;
  m_server = spawn_process(argv, m_options.dir / "serve.log");
}

void service_processes::kill_server() {
  if (m_server > 0) kill_and_reap(m_server, SIGKILL);
  m_server = -1;
}

bool service_processes::wait_for_server(int timeout_ms) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    httplib::Client c("127.0.0.1", m_port);
    c.set_connection_timeout(1);
    if (auto r = c.Get("/health"); r && r->status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  return false;
}

std::size_t service_processes::add_worker(const std::string& role) {
  m_workers.push_back({role});
  start_worker(m_workers.size() - 1);
  return m_workers.size() - 1;
}

void service_processes::start_worker(std::size_t i) {
  auto& w = m_workers.at(i);
  if (w.pid > 0) return;
  ++w.incarnation;
  auto argv = common_args();
  argv.insert(argv.end(), {"worker", "--queue", m_options.queue, "--role", w.role, "--evaluator", "fake", "--id-prefix",
                           fmt::format("slot{}.{}", i, w.incarnation)});
  argv.insert(argv.end(), m_options.timing.begin(), m_options.timing.end());
  argv.insert(argv.end(), m_options.worker_args.begin(), m_options.worker_args.end());
  w.pid = spawn_process(argv, m_options.dir / fmt::format("worker{}.log", i));
}

void service_processes::kill_worker(std::size_t i) {
  auto& w = m_workers.at(i);
  if (w.pid <= 0) return;
  ::kill(w.pid, SIGCONT);  // a paused worker must be able to die too
  kill_and_reap(w.pid, SIGKILL);
  w.pid = -1;
}

bool service_processes::restart_if_exited(std::size_t i) {
  auto& w = m_workers.at(i);
  if (w.pid <= 0 || !reap_within(w.pid, 0)) return false;
  w.pid = -1;
  start_worker(i);
  return true;
}

void service_processes::pause_worker(std::size_t i) {
  if (m_workers.at(i).pid > 0) ::kill(m_workers[i].pid, SIGSTOP);
}

void service_processes::resume_worker(std::size_t i) {
  if (m_workers.at(i).pid > 0) ::kill(m_workers[i].pid, SIGCONT);
}

void service_processes::stop_all() {
  std::vector<pid_t> pids;
  if (m_server > 0) pids.push_back(m_server);
  for (auto& w : m_workers)
    if (w.pid > 0) pids.push_back(w.pid);
  for (pid_t p : pids) {
    ::kill(p, SIGCONT);
    ::kill(p, SIGTERM);
  }
  for (pid_t p : pids)
    if (!reap_within(p, 5000)) kill_and_reap(p, SIGKILL);
  m_server = -1;
  for (auto& w : m_workers) w.pid = -1;
}

}  // namespace ptxbench::testing
