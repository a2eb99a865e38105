#include "agent/fake_llm_server.h"

#include <httplib.h>

namespace ptxbench::testing {

fake_llm_server::fake_llm_server() : m_server(std::make_unique<httplib::Server>()) {
  m_server->Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    ++m_requests;
    auto body = nlohmann::json::parse(req.body, nullptr, false);
    std::optional<scripted_fault> fault;
    std::pair<std::string, std::string> reply;
    {
      std::lock_guard lock(m_mutex);
      m_bodies.push_back(body);
      m_last_auth = req.get_header_value("Authorization");
      int turn = 0;
      if (body.is_object() && body.contains("messages"))
        for (const auto& m : body["messages"])
          if (m.value("role", "") == "assistant") ++turn;
      for (auto it = m_faults.begin(); it != m_faults.end(); ++it) {
        if (it->first >= 0 && it->first != turn) continue;
        fault = it->second;
        m_faults.erase(it);
        break;
      }
      if (!fault && m_always) fault = *m_always;
      auto it = m_replies.find(turn);
      reply = it != m_replies.end() ? it->second : std::make_pair(m_default_reply, std::string());
    }
    if (fault && fault->what == scripted_fault::kind::drop_connection) {
      // Send the headers and a piece of the body, then abort: the client sees the connection drop.
      res.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
        sink.write("{\"choi", 6);
        return false;
      });
      return;
    }
    if (fault) {
      res.status = fault->status;
      if (!fault->retry_after.empty()) res.set_header("Retry-After", fault->retry_after);
      res.set_content(fault->body.empty() ? R"({"error":{"message":"scripted failure"}})" : fault->body,
                      "application/json");
      return;
    }
    if (int ms = m_delay_ms.load(); ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    std::size_t prompt_chars = req.body.size();
    nlohmann::json message = {{"role", "assistant"}, {"content", reply.first}};
    if (!reply.second.empty()) message["reasoning_content"] = reply.second;
    nlohmann::json out = {
        {"id", "chatcmpl-fake"},
        {"object", "chat.completion"},
        {"model", body.value("model", "fake")},
        {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}}},
        {"usage", {{"prompt_tokens", prompt_chars / 4},
                   {"completion_tokens", (reply.first.size() + reply.second.size()) / 4},
                   {"total_tokens", prompt_chars / 4 + reply.first.size() / 4},
                   {"completion_tokens_details", {{"reasoning_tokens", reply.second.size() / 4}}}}}};
    res.set_content(out.dump(), "application/json");
  });
  m_port = m_server->bind_to_any_port("127.0.0.1");
  m_thread = std::thread([this] { m_server->listen_after_bind(); });
  while (!m_server->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

fake_llm_server::~fake_llm_server() {
  m_server->stop();
  if (m_thread.joinable()) m_thread.join();
}

std::string fake_llm_server::base_url() const { return "http://127.0.0.1:" + std::to_string(m_port) + "/v1"; }

void fake_llm_server::set_reply(int turn, std::string content, std::string reasoning) {
  std::lock_guard lock(m_mutex);
  m_replies[turn] = {std::move(content), std::move(reasoning)};
}

void fake_llm_server::set_default_reply(std::string content) {
  std::lock_guard lock(m_mutex);
  m_default_reply = std::move(content);
}

void fake_llm_server::inject(scripted_fault fault, int turn) {
  std::lock_guard lock(m_mutex);
  m_faults.emplace_back(turn, std::move(fault));
}

void fake_llm_server::clear_faults() {
  std::lock_guard lock(m_mutex);
  m_faults.clear();
  m_always.reset();
}

void fake_llm_server::always(scripted_fault fault) {
  std::lock_guard lock(m_mutex);
  m_always = std::make_unique<scripted_fault>(std::move(fault));
}

std::vector<nlohmann::json> fake_llm_server::request_bodies() const {
  std::lock_guard lock(m_mutex);
  return m_bodies;
}

std::string fake_llm_server::last_authorization() const {
  std::lock_guard lock(m_mutex);
  return m_last_auth;
}

}  // namespace ptxbench::testing
