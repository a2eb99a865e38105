#pragma once
// `ptxbench serve` and `ptxbench worker` as real processes that a test SIGKILLs and restarts: the
// server on a fixed loopback port (so clients reconnect to the same URL) and any number of worker
// slots, each restart a new incarnation with its own worker id.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace ptxbench::testing {

/// A loopback port nothing listens on right now.
int free_port();

struct process_options {
  std::string queue;
  std::filesystem::path dir;            ///< logs and the build cache
  std::vector<std::string> timing;      ///< --lease-ms ... for serve and every worker alike
  std::vector<std::string> serve_args;  ///< extra `serve` arguments
  std::vector<std::string> worker_args; ///< extra `worker` arguments
};

class service_processes {
 public:
  explicit service_processes(process_options options);
  ~service_processes();
  service_processes(const service_processes&) = delete;
  service_processes& operator=(const service_processes&) = delete;

  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  [[nodiscard]] int port() const { return m_port; }

  void start_server();
  void kill_server();                       ///< SIGKILL and reap
  /// Waits until GET /health answers (true) or timeout_ms passes.
  bool wait_for_server(int timeout_ms = 15000) const;

  std::size_t add_worker(const std::string& role);  ///< "cpu" or "gpu"; returns its slot
  void kill_worker(std::size_t slot);
  void start_worker(std::size_t slot);              ///< a new incarnation
  /// Starts a new incarnation if the slot's process has exited on its own; true when it had.
  bool restart_if_exited(std::size_t slot);
  void pause_worker(std::size_t slot);
  void resume_worker(std::size_t slot);
  [[nodiscard]] std::size_t workers() const { return m_workers.size(); }

  void stop_all();  ///< SIGTERM everything, SIGKILL what is left after 5 s

 private:
  struct slot {
    std::string role;
    int incarnation = 0;
    pid_t pid = -1;
  };
  std::vector<std::string> common_args() const;

  process_options m_options;
  int m_port;
  pid_t m_server = -1;
  int m_server_starts = 0;
  std::vector<slot> m_workers;
};

}  // namespace ptxbench::testing
