#include "worker_fleet.h"

#include <signal.h>
#include <sys/wait.h>

#include <fmt/format.h>

#include "child_process.h"

namespace ptxbench::testing {

std::filesystem::path fake_worker_binary() { return std::filesystem::path(PTXBENCH_TEST_BIN_DIR) / "ptxbench-fake-worker"; }

worker_fleet::~worker_fleet() {
  for (auto& s : m_slots)
    if (s.pid > 0) {
      kill_and_reap(s.pid, SIGKILL);
      s.pid = -1;
    }
}

std::size_t worker_fleet::add(queue::worker_role role, int count) {
  std::size_t first = m_slots.size();
  int base = 0;
  for (const auto& s : m_slots) base += s.role == role;
  for (int i = 0; i < count; ++i) {
    m_slots.push_back(slot{role, base + i});
    start(m_slots.back());
  }
  return first;
}

void worker_fleet::start(slot& s) {
  ++s.incarnation;
  std::string name = fmt::format("{}-{}", queue::to_string(s.role), s.index);
  std::vector<std::string> args{fake_worker_binary().string(),
                                "--queue", m_options.queue,
                                "--role", std::string(queue::to_string(s.role)),
                                "--id", fmt::format("{}.{}", name, s.incarnation),
                                "--lease-ms", std::to_string(m_options.lease_ms),
                                "--cpu-ms", std::to_string(m_options.cpu_ms),
                                "--gpu-ms", std::to_string(m_options.gpu_ms),
                                "--max-lost", std::to_string(m_options.max_lost_leases)};
  args.insert(args.end(), m_options.extra_args.begin(), m_options.extra_args.end());
  s.pid = spawn_process(args, m_options.log_dir / (name + ".log"));
}

void worker_fleet::kill(std::size_t i) {
  auto& s = m_slots.at(i);
  if (s.pid <= 0) return;
  ::kill(s.pid, SIGCONT);  // a paused worker must be able to die too
  kill_and_reap(s.pid, SIGKILL);
  s.pid = -1;
}

void worker_fleet::restart(std::size_t i) {
  if (m_slots.at(i).pid <= 0) start(m_slots[i]);
}

void worker_fleet::pause(std::size_t i) {
  if (m_slots.at(i).pid > 0) ::kill(m_slots[i].pid, SIGSTOP);
}

void worker_fleet::resume(std::size_t i) {
  if (m_slots.at(i).pid > 0) ::kill(m_slots[i].pid, SIGCONT);
}

std::vector<std::size_t> worker_fleet::reap_exited() {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < m_slots.size(); ++i) {
    auto& s = m_slots[i];
    if (s.pid > 0 && waitpid(s.pid, nullptr, WNOHANG) == s.pid) {
      s.pid = -1;
      out.push_back(i);
    }
  }
  return out;
}

void worker_fleet::stop_all() {
  for (auto& s : m_slots)
    if (s.pid > 0) {
      ::kill(s.pid, SIGCONT);
      ::kill(s.pid, SIGTERM);
    }
  for (auto& s : m_slots)
    if (s.pid > 0) {
      if (!reap_within(s.pid, 5000)) kill_and_reap(s.pid, SIGKILL);
      s.pid = -1;
    }
}

}  // namespace ptxbench::testing
