#pragma once
// A scripted OpenAI-compatible chat-completions server for tests (cpp-httplib, test binary only).
// Replies are chosen by turn (the number of assistant messages in the request), so concurrent
// trajectories get deterministic answers; faults queued with inject() are served first, in order.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace httplib {
class Server;
}

namespace ptxbench::testing {

struct scripted_fault {
  enum class kind { status, drop_connection };
  kind what = kind::status;
  int status = 500;
  std::string retry_after;  ///< Retry-After header value, if any
  std::string body;         ///< JSON error body
};

class fake_llm_server {
 public:
  /// Starts listening on 127.0.0.1 (a free port) in a background thread.
  fake_llm_server();
  ~fake_llm_server();
  fake_llm_server(const fake_llm_server&) = delete;
  fake_llm_server& operator=(const fake_llm_server&) = delete;

  /// "http://127.0.0.1:PORT/v1"
  [[nodiscard]] std::string base_url() const;

  /// The reply for turn k (content and optional reasoning_content).
  void set_reply(int turn, std::string content, std::string reasoning = "");
  /// The reply for any turn without its own.
  void set_default_reply(std::string content);
  /// Serves this fault once, to the next request (turn < 0) or to the next request for that turn.
  void inject(scripted_fault fault, int turn = -1);
  /// Forgets every queued and permanent fault.
  void clear_faults();
  /// Serves the fault to every request from now on.
  void always(scripted_fault fault);

  /// Every reply waits this long before it is sent (a model that is slow to answer).
  void set_reply_delay_ms(int ms) { m_delay_ms = ms; }

  [[nodiscard]] int requests() const { return m_requests.load(); }
  /// Bodies of every request received, parsed.
  [[nodiscard]] std::vector<nlohmann::json> request_bodies() const;
  /// Authorization header of the last request.
  [[nodiscard]] std::string last_authorization() const;

 private:
  std::unique_ptr<httplib::Server> m_server;
  std::thread m_thread;
  int m_port = 0;
  mutable std::mutex m_mutex;
  std::map<int, std::pair<std::string, std::string>> m_replies;
  std::string m_default_reply = "I have no kernel for you.";
  std::vector<std::pair<int, scripted_fault>> m_faults;
  std::unique_ptr<scripted_fault> m_always;
  std::vector<nlohmann::json> m_bodies;
  std::string m_last_auth;
  std::atomic<int> m_requests{0};
  std::atomic<int> m_delay_ms{0};
};

}  // namespace ptxbench::testing
