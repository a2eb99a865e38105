#pragma once
// A scripted model server for tests (cpp-httplib, test binary only): OpenAI-compatible chat
// completions (POST /v1/chat/completions), Anthropic Messages (POST /v1/messages) and Gemini
// (POST /v1beta/models/M:generateContent and :streamGenerateContent?alt=sse), each plain or streamed
// as server-sent events when the request asks for it. Replies are chosen by rules on the first user
// message (for teachers whose requests all look like turn 0), then by turn (the number of assistant
// messages in the request), so concurrent trajectories get deterministic answers; faults queued
// with inject() are served first, in order.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace httplib {
class Server;
}

namespace ptxbench::testing {

struct scripted_fault {
  /// status: an HTTP error; drop_connection: headers and a piece of a body, then the connection
  /// breaks; drop_mid_stream: a streamed reply breaks after its first events; stream_without_done:
  /// a complete streamed reply whose terminator ([DONE]) is missing; stream_truncated: a streamed
  /// reply that ends cleanly but early (no finish reason, no terminator); error_in_stream: an error
  /// event in the middle of a stream.
  /// stall_mid_stream: a streamed reply that stops sending after its first half for stall_ms, then
  /// breaks (a stuck provider behind a proxy that keeps the connection open).
  enum class kind { status, drop_connection, drop_mid_stream, stream_without_done, stream_truncated, error_in_stream,
                    stall_mid_stream };
  kind what = kind::status;
  int status = 500;
  std::string retry_after;  ///< Retry-After header value, if any
  std::string body;         ///< JSON error body
  int stall_ms = 3000;      ///< stall_mid_stream: how long nothing is sent
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
  /// Requests whose first user message contains `needle` (and, when turn >= 0, at that turn) get
  /// replies[0], then replies[1] ... (the last one repeats). Rules are tried in the order they were
  /// added, before the per-turn replies.
  void add_rule(std::string needle, std::vector<std::string> replies, int turn = -1);
  /// Every reply waits this long first (to let a test kill the client mid-call).
  void set_delay_ms(int ms);
  /// Streamed replies are cut into pieces of this many characters (default 7).
  void set_stream_piece(std::size_t chars);
  /// Streamed replies wait this long between events (a slow but steady generation).
  void set_stream_event_delay_ms(int ms);
  /// Serves this fault once, to the next request (turn < 0) or to the next request for that turn.
  void inject(scripted_fault fault, int turn = -1);
  /// Forgets every queued and permanent fault.
  void clear_faults();
  /// Serves the fault to every request from now on.
  void always(scripted_fault fault);

  [[nodiscard]] int requests() const { return m_requests.load(); }
  /// Requests that asked for a stream.
  [[nodiscard]] int streamed_requests() const { return m_streamed.load(); }
  /// "http://127.0.0.1:PORT" (the Anthropic and Gemini base URL).
  [[nodiscard]] std::string root_url() const;
  /// Bodies of every request received, parsed.
  [[nodiscard]] std::vector<nlohmann::json> request_bodies() const;
  /// Authorization header of the last request.
  [[nodiscard]] std::string last_authorization() const;

 private:
  struct rule {
    std::string needle;
    int turn = -1;
    std::vector<std::string> replies;
    std::size_t served = 0;
  };
  enum class api { openai, anthropic, gemini };
  /// Picks the reply and fault for a request (locked), records it.
  std::pair<std::pair<std::string, std::string>, std::optional<scripted_fault>> choose(const nlohmann::json& body,
                                                                                    const std::string& auth,
                                                                                    api which);
  void respond(api which, const nlohmann::json& body, bool stream, const std::pair<std::string, std::string>& reply,
               const std::optional<scripted_fault>& fault, void* response);

  std::unique_ptr<httplib::Server> m_server;
  std::vector<rule> m_rules;
  int m_delay_ms = 0;
  std::size_t m_piece = 7;
  int m_event_delay_ms = 0;
  std::atomic<int> m_streamed{0};
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
};

}  // namespace ptxbench::testing
