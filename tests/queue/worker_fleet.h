#pragma once
// A set of ptxbench-fake-worker processes that a test or benchmark can kill (SIGKILL), pause
// (SIGSTOP, a worker presumed dead that comes back), restart and stop. Each start is a new
// incarnation with its own worker id ("gpu-1.3"), so the job history shows who did what.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "queue/job.h"

namespace ptxbench::testing {

struct fleet_options {
  std::string queue;                  ///< --queue
  std::filesystem::path log_dir;      ///< one log file per worker slot
  int64_t lease_ms = 400;
  int cpu_ms = 10, gpu_ms = 60;
  int max_lost_leases = 10;
  std::vector<std::string> extra_args;
};

/// The fake worker binary next to the test binaries.
std::filesystem::path fake_worker_binary();

class worker_fleet {
 public:
  explicit worker_fleet(fleet_options options) : m_options(std::move(options)) {}
  ~worker_fleet();
  worker_fleet(const worker_fleet&) = delete;
  worker_fleet& operator=(const worker_fleet&) = delete;

  /// Starts `count` more workers of a role; returns the first new slot.
  std::size_t add(queue::worker_role role, int count);
  [[nodiscard]] std::size_t size() const { return m_slots.size(); }
  [[nodiscard]] bool running(std::size_t slot) const { return m_slots[slot].pid > 0; }

  void kill(std::size_t slot);     ///< SIGKILL and reap
  void restart(std::size_t slot);  ///< a new incarnation (the slot must not be running)
  void pause(std::size_t slot);    ///< SIGSTOP
  void resume(std::size_t slot);   ///< SIGCONT
  /// Slots whose process has exited by itself since the last call (reaped).
  std::vector<std::size_t> reap_exited();
  /// SIGTERM everything (graceful), SIGKILL what is still alive after 5 s.
  void stop_all();

 private:
  struct slot {
    queue::worker_role role;
    int index;
    int incarnation = 0;
    pid_t pid = -1;
  };
  void start(slot& s);

  fleet_options m_options;
  std::vector<slot> m_slots;
};

}  // namespace ptxbench::testing
