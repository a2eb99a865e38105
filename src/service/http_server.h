#pragma once
// `ptxbench serve`'s HTTP front: cpp-httplib routes to service_api, with the service's security
// rules applied before any handler runs:
//   - it listens on loopback unless told otherwise, and any other address requires a bearer token;
//   - with a token, every request must carry "Authorization: Bearer <token>" (compared in constant
//     time), else 401;
//   - bodies above max_body_bytes are refused with 413 before they are read, whatever their content
//     type; a POST without Content-Length or chunked framing has no body (RFC 9112);
//   - a known path asked with another method is 405, as upstream's;
//   - every error body is {"detail": ...} (service/request_problem.h).
// It binds its port exclusively: a second server on a port in use fails with "address in use".
// A reaper thread requeues expired leases (queue::job_store::requeue_expired) every reap interval,
// so a job whose worker died is retried even when no worker is leasing, and fails the jobs nothing
// can serve (service/unserved_jobs.h).

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "core/result.h"
#include "service/service_api.h"
#include "service/store_pool.h"

namespace httplib {
class Server;
}

namespace ptxbench::service {

struct server_settings {
  std::string host = "127.0.0.1";
  int port = 8000;  ///< 0: any free port (tests); port() says which
  std::string token;  ///< "" = no authentication (allowed only on loopback)
  std::size_t max_body_bytes = 4u << 20;
  int threads = 64;   ///< request threads (long-polls each hold one)
  int64_t reap_interval_ms = 1000;
  /// A waiting job with no live worker to take it is failed after this long (0: never).
  int64_t unserved_after_ms = 10000;
  api_settings api;
};

/// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback(const std::string& host);

/// Constant-time comparison (the token check must not leak how many leading bytes matched).
bool same_secret(const std::string& a, const std::string& b);

class http_server {
 public:
  /// Checks the settings (a non-loopback address needs a token) and binds the port.
  static result<std::unique_ptr<http_server>> create(server_settings settings, const suite& tasks,
                                                     std::unique_ptr<store_pool> stores,
                                                     std::unique_ptr<queue::job_store> reaper_store);
  ~http_server();

  [[nodiscard]] int port() const { return m_port; }
  /// Serves until stop() (blocking).
  void run();
  void stop();

 private:
  http_server() = default;
  void routes();
  void reap_loop();

  server_settings m_settings;
  const suite* m_tasks = nullptr;
  std::unique_ptr<store_pool> m_stores;
  std::unique_ptr<queue::job_store> m_reaper_store;
  std::unique_ptr<service_api> m_api;
  std::unique_ptr<httplib::Server> m_server;
  int m_port = 0;
  std::atomic<bool> m_stop{false};
  std::thread m_reaper;
};

}  // namespace ptxbench::service
