#pragma once
// `ptxbench serve --local-workers`: worker processes on this host, started and kept running by the
// server (one CPU worker, one GPU worker per local GPU). Each is a child `ptxbench worker` in its own
// process group with a parent-death signal, so a server that is SIGKILLed takes its workers with it
// and a restarted server starts fresh ones; their leases expire and the jobs run again. A worker that
// exits is restarted after a back-off (1 s by default, doubling to 30 s).

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ptxbench::service {

struct local_worker {
  std::string name;               ///< for the log file name: cpu, gpu0, ...
  std::vector<std::string> argv;  ///< argv[0]: the ptxbench binary
};

/// The local GPUs' CUDA ordinals (0..n-1).
std::vector<int> local_gpu_devices();

class local_workers {
 public:
  /// Starts the supervisor thread (which spawns the workers: the parent-death signal follows it).
  /// first_restart_ms: the back-off before a worker that exited is started again (it doubles for
  /// one that keeps dying at once, up to 30 s).
  local_workers(std::vector<local_worker> workers, std::filesystem::path log_dir, int first_restart_ms = 1000);
  ~local_workers();  ///< SIGTERM to every worker (they give their jobs back), SIGKILL after 15 s
  local_workers(const local_workers&) = delete;
  local_workers& operator=(const local_workers&) = delete;

  [[nodiscard]] int restarts() const { return m_restarts; }

 private:
  void supervise();

  std::vector<local_worker> m_workers;
  std::filesystem::path m_log_dir;
  int m_first_restart_ms = 1000;
  std::atomic<bool> m_stop{false};
  std::atomic<int> m_restarts{0};
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::thread m_thread;
};

}  // namespace ptxbench::service
