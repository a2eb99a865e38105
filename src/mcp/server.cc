#include "mcp/server.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>

#include <fmt/format.h>

#include "core/line_channel.h"
#include "mcp/task_tools.h"
#include "mcp/tool_catalog.h"

namespace ptxbench::mcp {
namespace {

std::string negotiate(const std::string& requested) {
  for (const char* v : k_protocol_versions)
    if (requested == v) return requested;
  return k_protocol_versions[0];
}

// notifications/progress while a call runs (MCP: only for a request that carried a progressToken,
// with a value that increases each time, and none after the response).
class progress_ticker {
 public:
  progress_ticker(std::function<void(const ordered_json&)> send, ordered_json token, double interval_s, std::string what)
      : m_send(std::move(send)), m_token(std::move(token)), m_interval(interval_s), m_what(std::move(what)) {
    if (m_token.is_null()) return;
    m_thread = std::thread([this] { tick(); });
  }
  ~progress_ticker() { stop(); }

  /// Stops the notifications; returns once the last one is written.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_done = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) m_thread.join();
  }

 private:
  void tick() {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    std::unique_lock<std::mutex> lock(m_mutex);
    for (int n = 0;; ++n) {
      const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
      m_send(notification("notifications/progress",
                          {{"progressToken", m_token},
                           {"progress", n},
                           {"message", fmt::format("{}: {:.0f} s", m_what, elapsed)}}));
      if (m_wake.wait_for(lock, std::chrono::duration<double>(m_interval), [this] { return m_done; })) return;
    }
  }

  std::function<void(const ordered_json&)> m_send;
  ordered_json m_token;
  double m_interval;
  std::string m_what;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_done = false;
  std::thread m_thread;
};

}  // namespace

server::server(services s, server_options options, int out_fd)
    : m_services(std::move(s)), m_options(options), m_out(out_fd), m_kernel_tools(m_services) {}

server::~server() {
  for (auto& t : m_threads)
    if (t.joinable()) t.join();
}

void server::send(const ordered_json& message) {
  std::lock_guard<std::mutex> lock(m_write);
  if (m_output_broken) return;
  if (!write_line(m_out, serialize(message))) m_output_broken = true;
}

int server::run(int in_fd) {
  line_reader in(in_fd, m_options.max_message_bytes, true);
  int code = 0;
  for (;;) {
    auto line = in.read_line(-1);
    if (!line) {
      std::fprintf(stderr, "ptxbench mcp: %s\n", line.err().message.c_str());
      code = 3;
      break;
    }
    if (line->kind == line_reader::read_kind::closed) break;
    if (line->kind == line_reader::read_kind::overlong) {
      send(error_message(nullptr, rpc_error::parse_error,
                         fmt::format("parse error: a message longer than {} bytes; skipped", m_options.max_message_bytes)));
      continue;
    }
    if (line->kind == line_reader::read_kind::line) handle_line(line->line);
  }
  // The client closed its end: the calls in flight finish (their answers go nowhere if it is gone).
  for (auto& t : m_threads)
    if (t.joinable()) t.join();
  m_threads.clear();
  return code;
}

void server::handle_line(const std::string& line) {
  if (line.find_first_not_of(" \t\r") == std::string::npos) return;  // a blank line is no message
  const incoming m = classify(line);
  try {
    switch (m.what) {
      case incoming::kind::invalid:
        send(error_message(m.id, static_cast<rpc_error>(m.error_code), m.problem));
        return;
      case incoming::kind::response: return;  // the server sends no requests, so it awaits no response
      case incoming::kind::notification: handle_notification(m); return;
      case incoming::kind::request: handle_request(m); return;
    }
  } catch (const std::exception& e) {
    if (m.what == incoming::kind::request)
      send(error_message(m.id, rpc_error::internal_error, std::string("internal error: ") + e.what()));
  }
}

void server::handle_notification(const incoming& m) {
  if (m.method == "notifications/cancelled") {
    // The answer to a cancelled request is not sent (MCP); the evaluation itself runs to its end.
    const auto& p = m.params;
    if (p.contains("requestId") && (p["requestId"].is_string() || p["requestId"].is_number_integer())) {
      std::lock_guard<std::mutex> lock(m_calls);
      if (auto it = m_in_flight.find(p["requestId"].dump()); it != m_in_flight.end()) it->second = true;
    }
  }
  // notifications/initialized and anything else: nothing to answer (notifications get no response).
}

void server::handle_request(const incoming& m) {
  if (m.method == "ping") {
    send(result_message(m.id, ordered_json::object()));
    return;
  }
  if (m.method == "initialize") {
    initialize(m);
    return;
  }
  if (!m_initialized) {
    send(error_message(m.id, rpc_error::invalid_request, "not initialized: send initialize first"));
    return;
  }
  if (m.method == "tools/list") {
    send(result_message(m.id, tool_list(m_services.evaluator_description)));
    return;
  }
  if (m.method == "tools/call") {
    call_tool(m);
    return;
  }
  send(error_message(m.id, rpc_error::method_not_found, fmt::format("method not found: {}", m.method)));
}

void server::initialize(const incoming& m) {
  if (m_initialized) {
    send(error_message(m.id, rpc_error::invalid_request, "already initialized"));
    return;
  }
  const auto& p = m.params;
  if (!p.contains("protocolVersion") || !p["protocolVersion"].is_string()) {
    send(error_message(m.id, rpc_error::invalid_params, "initialize: params.protocolVersion must be a string"));
    return;
  }
  m_version = negotiate(p["protocolVersion"].get<std::string>());
  m_initialized = true;
  send(result_message(
      m.id, {{"protocolVersion", m_version},
             {"capabilities", {{"tools", {{"listChanged", false}}}}},
             {"serverInfo", {{"name", "ptxbench"}, {"title", "PTXBench"}, {"version", PTXBENCH_VERSION}}},
             {"instructions",
              fmt::format("PTXBench evaluates GPU kernels written for one task of its suite. list_tasks lists the "
                          "tasks; show_task gives the prompt (rules, kernel ABI, knowledge pack, the task with its "
                          "shapes); check runs the CPU stages (gate, build, static SASS); evaluate runs every stage on "
                          "{} and says whether the kernel is correct, how fast it is against the vendor library and "
                          "whether the target's own instructions (wgmma/TMA on Hopper) executed.",
                          m_services.evaluator_description)}}));
}

void server::call_tool(const incoming& m) {
  const auto& p = m.params;
  if (!p.contains("name") || !p["name"].is_string()) {
    send(error_message(m.id, rpc_error::invalid_params, "tools/call: params.name must be a string"));
    return;
  }
  const std::string name = p["name"].get<std::string>();
  if (!is_tool(name)) {
    send(error_message(m.id, rpc_error::invalid_params, fmt::format("unknown tool: {}", name)));
    return;
  }
  ordered_json arguments = p.contains("arguments") ? p["arguments"] : ordered_json::object();
  if (!arguments.is_object()) {
    send(error_message(m.id, rpc_error::invalid_params, "tools/call: params.arguments must be an object"));
    return;
  }
  ordered_json token;
  if (p.contains("_meta") && p["_meta"].is_object() && p["_meta"].contains("progressToken")) {
    const auto& t = p["_meta"]["progressToken"];
    if (t.is_string() || t.is_number_integer()) token = t;
  }
  if (name == k_list_tasks || name == k_show_task) {
    auto r = name == k_list_tasks ? list_tasks(m_services, arguments) : show_task(m_services, arguments);
    send(r ? result_message(m.id, std::move(*r)) : error_message(m.id, rpc_error::invalid_params, r.err().message));
    return;
  }
  // check and evaluate take long: their own thread, so this one keeps reading (ping, cancellation).
  // They queue for the one evaluator; a client that piles up more than k_max_in_flight is told to wait.
  const std::string key = m.id.dump();
  {
    std::lock_guard<std::mutex> lock(m_calls);
    if (m_in_flight.count(key)) {
      send(error_message(m.id, rpc_error::invalid_request, fmt::format("request id {} is already in use", key)));
      return;
    }
    if (m_in_flight.size() >= k_max_in_flight) {
      send(error_message(m.id, rpc_error::invalid_request,
                         fmt::format("{} calls are waiting for the evaluator already; send more after their answers",
                                     k_max_in_flight)));
      return;
    }
    m_in_flight.emplace(key, false);
  }
  join_finished();
  try {
    m_threads.emplace_back(&server::run_kernel_tool, this, m.id, std::move(arguments), name == k_evaluate,
                           std::move(token));
  } catch (...) {
    std::lock_guard<std::mutex> lock(m_calls);
    m_in_flight.erase(key);
    throw;  // answered as an internal error
  }
}

void server::run_kernel_tool(ordered_json id, ordered_json arguments, bool run_on_gpu, ordered_json token) {
  ordered_json reply;
  try {
    progress_ticker progress([this](const ordered_json& n) { send(n); }, token, m_options.progress_interval_s,
                             run_on_gpu ? "evaluating" : "checking");
    auto r = m_kernel_tools.call(arguments, run_on_gpu);
    progress.stop();
    reply = r ? result_message(id, std::move(*r)) : error_message(id, rpc_error::invalid_params, r.err().message);
  } catch (const std::exception& e) {
    reply = error_message(id, rpc_error::internal_error, std::string("internal error: ") + e.what());
  }
  bool cancelled = false;
  {
    std::lock_guard<std::mutex> lock(m_calls);
    auto it = m_in_flight.find(id.dump());
    cancelled = it != m_in_flight.end() && it->second;
    if (it != m_in_flight.end()) m_in_flight.erase(it);
    m_finished.push_back(std::this_thread::get_id());
  }
  if (!cancelled) send(reply);
}

void server::join_finished() {
  std::vector<std::thread::id> done;
  {
    std::lock_guard<std::mutex> lock(m_calls);
    done.swap(m_finished);
  }
  for (auto id : done) {
    auto it = std::find_if(m_threads.begin(), m_threads.end(), [id](const std::thread& t) { return t.get_id() == id; });
    if (it == m_threads.end()) continue;
    it->join();
    m_threads.erase(it);
  }
}

}  // namespace ptxbench::mcp
