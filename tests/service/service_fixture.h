#pragma once
// An evaluation service in this test process: `serve`'s HTTP server on a free loopback port over a
// fresh SQLite queue, with worker loops on threads that use the fake evaluator (serve/job_runner.h),
// registered with their environments like real workers (so the result cache answers).

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/json_check.h"
#include "service/http_server.h"
#include "service/service_client.h"
#include "queue/job_store.h"
#include "suite/task.h"

namespace ptxbench::testing {

const suite& test_suite();

/// A Solution for gemm_n7168_k5120 whose kernel.cu holds `code` (fake-evaluator markers decide).
ordered_json gemm_solution(const std::string& code, const std::string& name = "k");

/// Sends bytes on a fresh connection to 127.0.0.1:port and returns everything the server answers
/// until it closes or one whole response (headers and Content-Length bytes) is in.
std::string raw_exchange(int port, const std::string& bytes);

struct service_setup {
  std::string token;                             ///< "" for none
  int cpu_workers = 1, gpu_workers = 1;          ///< worker loops to run (0 for a queue nobody serves)
  std::size_t max_body = 1u << 20;
  std::string default_target = "h200";           ///< "" = the one the live GPU workers serve
  std::vector<std::string> gpu_targets = {"h200"};
  int64_t unserved_after_ms = 0;                 ///< 0: jobs nothing serves wait forever
};

class in_process_service {
 public:
  /// token: "" for none. workers: CPU and GPU loops to run (0 for a queue nobody serves).
  explicit in_process_service(const std::string& token = "", int cpu_workers = 1, int gpu_workers = 1,
                              std::size_t max_body = 1u << 20);
  explicit in_process_service(const service_setup& setup);
  ~in_process_service();

  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(m_server->port()); }
  [[nodiscard]] int port() const { return m_server->port(); }
  queue::job_store& store() { return *m_store; }
  std::unique_ptr<service::service_client> client(const std::string& token = "");
  /// queued + compiling + compiled + running + done + failed: every job the queue holds.
  int64_t jobs_in_queue();

 private:
  std::filesystem::path m_dir;
  std::unique_ptr<queue::job_store> m_store;
  std::unique_ptr<service::http_server> m_server;
  std::thread m_serving;
  std::atomic<bool> m_stop{false};
  std::vector<std::thread> m_workers;
};

}  // namespace ptxbench::testing
