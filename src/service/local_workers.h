#pragma once
// `ptxbench serve --local-workers`: worker processes on this host, started and kept running by the
// server (one CPU worker, one GPU worker per local GPU). Each is a child `ptxbench worker` in its own
// process group with a parent-death signal, so a server that is SIGKILLed takes its workers with it
// and a restarted server starts fresh ones; their leases expire and the jobs run again. A worker that
// exits is restarted after a back-off (1 s by default), doubling up to 30 s only while it keeps dying
// at once (within k_dies_at_once of its start); one that ran longer is restarted after the first delay.

#include <sys/types.h>

#include <atomic>
#include <chrono>
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

/// A worker that exits sooner than this after its start "dies at once" (a bad configuration, a
/// missing tool): its restart delay doubles. One that ran longer did work and is restarted promptly.
inline constexpr std::chrono::milliseconds k_dies_at_once{5000};

/// The delay before restarting a worker that ran for `ran` and was last restarted after `previous_ms`
/// (0 for its first exit): first_ms after a worker that ran, else double the previous up to 30 s.
int restart_delay_ms(int previous_ms, int first_ms, std::chrono::milliseconds ran);

class local_workers {
 public:
  /// Starts the supervisor thread (which spawns the workers: the parent-death signal follows it).
  /// first_restart_ms: the back-off before a worker that exited is started again (it doubles for
  /// one that keeps dying at once, up to 30 s).
  local_workers(std::vector<local_worker> workers, std::filesystem::path log_dir, int first_restart_ms = 1000);
  ~local_workers();  ///< SIGTERM to every worker (they give their jobs back), SIGKILL after 15 s
  local_workers(const local_workers&) = delete;
  local_workers& operator=(const local_workers&) = delete;

 private:
  void supervise();

  std::vector<local_worker> m_workers;
  std::filesystem::path m_log_dir;
  int m_first_restart_ms = 1000;
  std::atomic<bool> m_stop{false};
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::thread m_thread;
};

}  // namespace ptxbench::service
