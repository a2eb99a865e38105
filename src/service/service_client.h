#pragma once
// A client of the evaluation service's HTTP API (upstream's endpoints), for `ptxbench eval --remote`,
// the agent's remote evaluator and `ptxbench jobs --url`. It rides out a server restart: a
// connection that fails or a 503 (the server or its database is restarting) is retried with
// back-off for up to retry_for_s; any other HTTP answer is returned as it is.

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "core/json_check.h"
#include "core/result.h"

namespace httplib {
class Client;
}

namespace ptxbench::service {

struct client_settings {
  std::string url;                         ///< http://host:port[/prefix]
  std::string token;                       ///< bearer token ("" = none)
  double retry_for_s = 900;                ///< how long an unreachable server is waited for
  const std::atomic<bool>* cancel = nullptr;
  /// Told (one line) when a request could not reach the server and is being retried: at the first
  /// failure and then every 30 s while it lasts. Unset: retries are silent.
  std::function<void(const std::string&)> on_retry;
};

struct http_reply {
  int status = 0;
  ordered_json body;  ///< null when the body was not JSON
};

/// The "detail" of an error reply, or its status.
std::string reply_detail(const http_reply& r);

class service_client {
 public:
  static result<std::unique_ptr<service_client>> create(client_settings settings);
  ~service_client();

  result<http_reply> get(const std::string& path, double read_timeout_s = 60);
  result<http_reply> post(const std::string& path, const ordered_json& body, double read_timeout_s = 60);
  [[nodiscard]] const std::string& url() const { return m_settings.url; }

 private:
  service_client() = default;
  result<http_reply> request(bool post, const std::string& path, const std::string& body, double read_timeout_s);

  client_settings m_settings;
  std::string m_origin, m_prefix;
};

}  // namespace ptxbench::service
