#include "service/local_workers.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <regex>

#include "core/process.h"
#include "core/spawn.h"

namespace ptxbench::service {
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

std::vector<int> local_gpu_devices() {
  // CUDA ordinals, not /dev/nvidiaN numbers (a container may see /dev/nvidia3 as device 0): the
  // entries of CUDA_VISIBLE_DEVICES when set, else the GPUs nvidia-smi lists, else the count of
  // /dev/nvidiaN nodes.
  int count = 0;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible && *visible) {
    std::string v = visible;
    count = 1 + static_cast<int>(std::count(v.begin(), v.end(), ','));
  } else if (auto smi = run_process({.argv = {"nvidia-smi", "-L"}, .timeout_s = 20}); smi.succeeded()) {
    std::size_t pos = 0;
    while ((pos = smi.out.find("GPU ", pos)) != std::string::npos) {
      if (pos == 0 || smi.out[pos - 1] == '\n') ++count;
      pos += 4;
    }
  } else {
    std::error_code ec;
    static const std::regex name(R"(nvidia(\d+))");
    for (const auto& e : fs::directory_iterator("/dev", ec)) {
      std::string n = e.path().filename().string();
      if (std::regex_match(n, name)) ++count;
    }
  }
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(i);
  return out;
}

int restart_delay_ms(int previous_ms, int first_ms, std::chrono::milliseconds ran) {
  if (previous_ms <= 0 || ran >= k_dies_at_once) return first_ms;
  return std::max(std::min(previous_ms * 2, 30000), first_ms);
}

local_workers::local_workers(std::vector<local_worker> workers, fs::path log_dir, int first_restart_ms)
    : m_workers(std::move(workers)),
      m_log_dir(std::move(log_dir)),
      m_first_restart_ms(std::max(first_restart_ms, 0)),
      m_thread([this] { supervise(); }) {}

local_workers::~local_workers() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_all();
  m_thread.join();
}

void local_workers::supervise() {
  struct child {
    pid_t pid = -1;
    clock_type::time_point next_start = clock_type::now();
    int delay_ms = 0;  ///< the delay before its last restart (0: none yet)
    clock_type::time_point started;
  };
  std::vector<child> children(m_workers.size());
  std::error_code ec;
  fs::create_directories(m_log_dir, ec);
  std::unique_lock lock(m_mutex);
  while (!m_stop) {
    for (std::size_t i = 0; i < children.size(); ++i) {
      auto& c = children[i];
      if (c.pid > 0) {
        if (auto st = reap_if_exited(c.pid)) {
          auto ran = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - c.started);
          c.delay_ms = restart_delay_ms(c.delay_ms, m_first_restart_ms, ran);
          std::fprintf(stderr, "ptxbench serve: local worker %s %s after %.1f s; restarting in %d ms\n",
                       m_workers[i].name.c_str(), describe_wait_status(*st).c_str(), ran.count() / 1000.0, c.delay_ms);
          c.pid = -1;
          c.next_start = clock_type::now() + std::chrono::milliseconds(c.delay_ms);
        }
      }
      if (c.pid <= 0 && clock_type::now() >= c.next_start) {
        auto pid = spawn_background({.argv = m_workers[i].argv, .log = m_log_dir / ("worker-" + m_workers[i].name + ".log")});
        if (pid) {
          c.pid = *pid;
          c.started = clock_type::now();
        } else {
          c.delay_ms = restart_delay_ms(c.delay_ms, m_first_restart_ms, std::chrono::milliseconds(0));
          std::fprintf(stderr, "ptxbench serve: cannot start local worker %s: %s\n", m_workers[i].name.c_str(),
                       pid.err().message.c_str());
          c.next_start = clock_type::now() + std::chrono::milliseconds(c.delay_ms);
        }
      }
    }
    m_wake.wait_for(lock, std::chrono::milliseconds(200), [this] { return m_stop.load(); });
  }
  lock.unlock();
  for (auto& c : children)
    if (c.pid > 0) ::kill(-c.pid, SIGTERM);
  for (auto& c : children)
    if (c.pid > 0) stop_child(c.pid, SIGTERM, 15000);
}

}  // namespace ptxbench::service
