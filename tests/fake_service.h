#pragma once
// `ptxbench serve --evaluator fake` as a background process, for tests of the service's clients
// (the exported Harbor verifier, `ptxbench mcp --remote`): a free loopback port, its own service
// folder and log, local fake workers, stopped with the object. Its verdicts come from markers in
// the kernel (agent/fake_evaluator.h) and mean nothing.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace ptxbench::testing {

/// A loopback TCP port nothing listens on right now.
int free_loopback_port();

class fake_service {
 public:
  /// Starts the server (extra: more `serve` arguments, e.g. --fake-delay-ms) and waits up to 20 s
  /// until it accepts connections; ready() says whether it did.
  explicit fake_service(const std::filesystem::path& dir, const std::vector<std::string>& extra = {});
  ~fake_service();
  fake_service(const fake_service&) = delete;
  fake_service& operator=(const fake_service&) = delete;

  [[nodiscard]] bool ready() const { return m_ready; }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  [[nodiscard]] std::filesystem::path log() const { return m_log; }

 private:
  int m_port;
  pid_t m_pid = -1;
  bool m_ready = false;
  std::filesystem::path m_log;
};

}  // namespace ptxbench::testing
