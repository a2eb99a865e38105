#pragma once
// `ptxbench mcp`: a Model Context Protocol server over stdio (docs/coding-agents.md). One JSON-RPC
// message per line in and out. Lifecycle: initialize (protocol version negotiated:
// 2025-06-18, 2025-03-26 or 2024-11-05), notifications/initialized; then tools/list and tools/call
// (list_tasks, show_task, check, evaluate) and ping, at any time. check and evaluate run on their
// own thread, one at a time, so ping and cancellation are answered while a long evaluation runs;
// with a progressToken, evaluate reports notifications/progress (seconds spent) until it answers.
// Every bad message gets a JSON-RPC error and the server carries on.

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/json_check.h"
#include "mcp/jsonrpc.h"
#include "mcp/kernel_tools.h"
#include "mcp/services.h"

namespace ptxbench::mcp {

/// The protocol versions this server speaks, newest first; an unknown requested version is answered
/// with the first.
inline constexpr const char* k_protocol_versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

/// check and evaluate calls that may wait for the evaluator at once (each holds a thread).
inline constexpr std::size_t k_max_in_flight = 64;

struct server_options {
  double progress_interval_s = 2.0;              ///< between two progress notifications
  std::size_t max_message_bytes = 64u << 20;     ///< a longer line is answered with a parse error and skipped
};

class server {
 public:
  /// Writes every message to out_fd (the real stdout: cmd_mcp.cc points fd 1 at stderr, so nothing
  /// else can write into the protocol stream).
  server(services s, server_options options, int out_fd);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// Reads messages from in_fd until it closes, then waits for the calls in flight; returns 0, or 3
  /// when the input could not be read.
  int run(int in_fd);

  /// Handles one line (what run() does with each).
  void handle_line(const std::string& line);

 private:
  void handle_request(const incoming& m);
  void handle_notification(const incoming& m);
  void initialize(const incoming& m);
  void call_tool(const incoming& m);
  void run_kernel_tool(ordered_json id, ordered_json arguments, bool run_on_gpu, ordered_json progress_token);
  void send(const ordered_json& message);
  void join_finished();

  services m_services;
  server_options m_options;
  int m_out;
  kernel_tools m_kernel_tools;
  std::mutex m_write;
  bool m_output_broken = false;  ///< the client is gone: nothing more is written
  bool m_initialized = false;    ///< initialize was answered
  std::string m_version;

  std::mutex m_calls;
  std::map<std::string, bool> m_in_flight;  ///< request id (serialized) → cancelled
  std::vector<std::thread> m_threads;
  std::vector<std::thread::id> m_finished;
};

}  // namespace ptxbench::mcp
