#include "agent/fake_llm_server.h"

#include <httplib.h>

#include <chrono>
#include <thread>

namespace ptxbench::testing {
namespace {

using json = nlohmann::json;

// The first user message's text, whatever the API's layout.
std::string first_user_text(const json& body) {
  auto text_of = [](const json& content) {
    if (content.is_string()) return content.get<std::string>();
    std::string out;
    if (content.is_array())
      for (const auto& part : content)
        if (part.is_object() && part.contains("text") && part["text"].is_string()) out += part["text"].get<std::string>();
    return out;
  };
  if (body.contains("messages"))
    for (const auto& m : body["messages"])
      if (m.value("role", "") == "user") return text_of(m.contains("content") ? m["content"] : json());
  if (body.contains("contents"))
    for (const auto& c : body["contents"])
      if (c.value("role", "") == "user") return text_of(c.contains("parts") ? c["parts"] : json());
  return "";
}

int turn_of(const json& body) {
  int turn = 0;
  for (const char* key : {"messages", "contents"})
    if (body.is_object() && body.contains(key))
      for (const auto& m : body[key]) {
        std::string role = m.value("role", "");
        if (role == "assistant" || role == "model") ++turn;
      }
  return turn;
}

std::vector<std::string> pieces(const std::string& s, std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size(); i += n) out.push_back(s.substr(i, n));
  return out;
}

// The SSE events of a reply in each API's streaming layout (complete, terminator included).
std::vector<std::string> stream_events(int which, const json& body, const std::string& content,
                                       const std::string& reasoning, std::size_t piece, std::size_t prompt_chars) {
  std::vector<std::string> ev;
  auto data = [](const json& j) { return "data: " + j.dump() + "\n\n"; };
  int64_t in = static_cast<int64_t>(prompt_chars / 4), out = static_cast<int64_t>((content.size() + reasoning.size()) / 4);
  if (which == 0) {  // OpenAI
    auto chunk = [&](json delta, json finish) {
      return data({{"id", "chatcmpl-fake"}, {"object", "chat.completion.chunk"}, {"model", body.value("model", "fake")},
                   {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}}});
    };
    ev.push_back(chunk({{"role", "assistant"}, {"content", ""}}, nullptr));
    for (const auto& p : pieces(reasoning, piece)) ev.push_back(chunk({{"reasoning_content", p}}, nullptr));
    for (const auto& p : pieces(content, piece)) ev.push_back(chunk({{"content", p}}, nullptr));
    ev.push_back(chunk(json::object(), "stop"));
    bool usage = body.contains("stream_options") && body["stream_options"].value("include_usage", false);
    if (usage)
      ev.push_back(data({{"id", "chatcmpl-fake"}, {"object", "chat.completion.chunk"}, {"choices", json::array()},
                         {"usage", {{"prompt_tokens", in}, {"completion_tokens", out}, {"total_tokens", in + out},
                                    {"completion_tokens_details", {{"reasoning_tokens", reasoning.size() / 4}}}}}}));
    ev.push_back("data: [DONE]\n\n");
  } else if (which == 1) {  // Anthropic
    auto event = [&](const std::string& name, const json& j) { return "event: " + name + "\n" + data(j); };
    ev.push_back(event("message_start", {{"type", "message_start"},
                                         {"message", {{"id", "msg_fake"}, {"type", "message"}, {"role", "assistant"},
                                                      {"model", body.value("model", "fake")}, {"content", json::array()},
                                                      {"usage", {{"input_tokens", in}, {"output_tokens", 1}}}}}}));
    ev.push_back(": keep-alive comment\n\n");
    int index = 0;
    if (!reasoning.empty()) {
      ev.push_back(event("content_block_start", {{"type", "content_block_start"}, {"index", index},
                                                 {"content_block", {{"type", "thinking"}, {"thinking", ""}}}}));
      for (const auto& p : pieces(reasoning, piece))
        ev.push_back(event("content_block_delta", {{"type", "content_block_delta"}, {"index", index},
                                                   {"delta", {{"type", "thinking_delta"}, {"thinking", p}}}}));
      ev.push_back(event("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
      ++index;
    }
    ev.push_back(event("content_block_start", {{"type", "content_block_start"}, {"index", index},
                                               {"content_block", {{"type", "text"}, {"text", ""}}}}));
    ev.push_back(event("ping", {{"type", "ping"}}));
    for (const auto& p : pieces(content, piece))
      ev.push_back(event("content_block_delta", {{"type", "content_block_delta"}, {"index", index},
                                                 {"delta", {{"type", "text_delta"}, {"text", p}}}}));
    ev.push_back(event("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
    ev.push_back(event("message_delta", {{"type", "message_delta"}, {"delta", {{"stop_reason", "end_turn"}}},
                                         {"usage", {{"output_tokens", out}}}}));
    ev.push_back(event("message_stop", {{"type", "message_stop"}}));
  } else {  // Gemini
    auto chunk = [&](const json& parts, bool last) {
      json cand = {{"content", {{"role", "model"}, {"parts", parts}}}, {"index", 0}};
      if (last) cand["finishReason"] = "STOP";
      json usage = {{"promptTokenCount", in}, {"candidatesTokenCount", last ? out - static_cast<int64_t>(reasoning.size() / 4) : 1},
                    {"thoughtsTokenCount", reasoning.size() / 4}};
      return "data: " + json({{"candidates", {cand}}, {"usageMetadata", usage}}).dump() + "\r\n\r\n";  // CRLF, as Google sends
    };
    for (const auto& p : pieces(reasoning, piece)) ev.push_back(chunk({{{"text", p}, {"thought", true}}}, false));
    auto parts = pieces(content, piece);
    for (std::size_t i = 0; i < parts.size(); ++i) ev.push_back(chunk({{{"text", parts[i]}}}, i + 1 == parts.size()));
    if (parts.empty()) ev.push_back(chunk(json::array(), true));
  }
  return ev;
}

// Non-streamed bodies.
json plain_body(int which, const json& body, const std::string& content, const std::string& reasoning, std::size_t prompt_chars) {
  int64_t in = static_cast<int64_t>(prompt_chars / 4), out = static_cast<int64_t>((content.size() + reasoning.size()) / 4);
  if (which == 0) {
    json message = {{"role", "assistant"}, {"content", content}};
    if (!reasoning.empty()) message["reasoning_content"] = reasoning;
    return {{"id", "chatcmpl-fake"}, {"object", "chat.completion"}, {"model", body.value("model", "fake")},
            {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}}},
            {"usage", {{"prompt_tokens", in}, {"completion_tokens", out}, {"total_tokens", in + out},
                       {"completion_tokens_details", {{"reasoning_tokens", reasoning.size() / 4}}}}}};
  }
  if (which == 1) {
    json blocks = json::array();
    if (!reasoning.empty()) blocks.push_back({{"type", "thinking"}, {"thinking", reasoning}});
    blocks.push_back({{"type", "text"}, {"text", content}});
    return {{"id", "msg_fake"}, {"type", "message"}, {"role", "assistant"}, {"content", blocks},
            {"stop_reason", "end_turn"}, {"usage", {{"input_tokens", in}, {"output_tokens", out}}}};
  }
  json parts = json::array();
  if (!reasoning.empty()) parts.push_back({{"text", reasoning}, {"thought", true}});
  parts.push_back({{"text", content}});
  return {{"candidates", {{{"content", {{"role", "model"}, {"parts", parts}}}, {"finishReason", "STOP"}}}},
          {"usageMetadata", {{"promptTokenCount", in}, {"candidatesTokenCount", content.size() / 4},
                             {"thoughtsTokenCount", reasoning.size() / 4}}}};
}

}  // namespace

std::pair<std::pair<std::string, std::string>, std::optional<scripted_fault>> fake_llm_server::choose(
    const json& body, const std::string& auth, api which) {
  (void)which;
  std::lock_guard lock(m_mutex);
  m_bodies.push_back(body);
  m_last_auth = auth;
  int turn = turn_of(body);
  std::optional<scripted_fault> fault;
  for (auto it = m_faults.begin(); it != m_faults.end(); ++it) {
    if (it->first >= 0 && it->first != turn) continue;
    fault = it->second;
    m_faults.erase(it);
    break;
  }
  if (!fault && m_always) fault = *m_always;
  std::string user = first_user_text(body);
  for (auto& r : m_rules) {
    if ((r.turn >= 0 && r.turn != turn) || user.find(r.needle) == std::string::npos || r.replies.empty()) continue;
    std::size_t k = std::min(r.served, r.replies.size() - 1);
    if (!fault) ++r.served;  // a failed delivery does not use up the reply
    return {{r.replies[k], ""}, fault};
  }
  auto it = m_replies.find(turn);
  return {it != m_replies.end() ? it->second : std::make_pair(m_default_reply, std::string()), fault};
}

void fake_llm_server::respond(api which, const json& body, bool stream, const std::pair<std::string, std::string>& reply,
                              const std::optional<scripted_fault>& fault, void* response) {
  auto& res = *static_cast<httplib::Response*>(response);
  if (m_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(m_delay_ms));
  if (fault && fault->what == scripted_fault::kind::drop_connection) {
    // Send the headers and a piece of the body, then abort: the client sees the connection drop.
    res.set_chunked_content_provider("application/json", [](size_t, httplib::DataSink& sink) {
      sink.write("{\"choi", 6);
      return false;
    });
    return;
  }
  if (fault && fault->what == scripted_fault::kind::status) {
    res.status = fault->status;
    if (!fault->retry_after.empty()) res.set_header("Retry-After", fault->retry_after);
    res.set_content(fault->body.empty() ? R"({"error":{"message":"scripted failure"}})" : fault->body, "application/json");
    return;
  }
  std::size_t prompt_chars = body.dump().size();
  if (!stream) {
    res.set_content(plain_body(static_cast<int>(which), body, reply.first, reply.second, prompt_chars).dump(),
                    "application/json");
    return;
  }
  ++m_streamed;
  auto events = stream_events(static_cast<int>(which), body, reply.first, reply.second, m_piece, prompt_chars);
  auto what = fault ? fault->what : scripted_fault::kind::status;
  bool has_fault = fault.has_value();
  if (has_fault && what == scripted_fault::kind::stream_without_done && !events.empty()) events.pop_back();
  if (has_fault && what == scripted_fault::kind::stream_truncated && events.size() > 3) events.resize(events.size() / 2);
  if (has_fault && what == scripted_fault::kind::error_in_stream && events.size() > 2)
    events.insert(events.begin() + 2, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
                                      "\"message\":\"Overloaded\"}}\n\n");
  std::size_t cut = has_fault && what == scripted_fault::kind::drop_mid_stream ? std::max<std::size_t>(2, events.size() / 2)
                                                                                : events.size() + 1;
  std::size_t stall_at = has_fault && what == scripted_fault::kind::stall_mid_stream ? std::max<std::size_t>(2, events.size() / 2)
                                                                                     : events.size() + 1;
  int stall_ms = fault ? fault->stall_ms : 0, gap_ms = m_event_delay_ms;
  auto shared = std::make_shared<std::vector<std::string>>(std::move(events));
  res.set_chunked_content_provider("text/event-stream", [shared, cut, stall_at, stall_ms, gap_ms](size_t offset,
                                                                                                 httplib::DataSink& sink) {
    (void)offset;
    for (std::size_t i = 0; i < shared->size(); ++i) {
      if (i == cut) return false;  // break the connection mid-stream
      if (i == stall_at) {         // nothing for a while, the connection open; then it breaks
        std::this_thread::sleep_for(std::chrono::milliseconds(stall_ms));
        return false;
      }
      if (gap_ms > 0 && i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
      sink.write((*shared)[i].data(), (*shared)[i].size());
    }
    sink.done();
    return true;
  });
}

fake_llm_server::fake_llm_server() : m_server(std::make_unique<httplib::Server>()) {
  auto handler = [this](api which) {
    return [this, which](const httplib::Request& req, httplib::Response& res) {
      ++m_requests;
      auto body = json::parse(req.body, nullptr, false);
      if (!body.is_object()) body = json::object();
      std::string auth = req.get_header_value("Authorization");
      if (auth.empty()) auth = req.get_header_value("x-api-key");
      if (auth.empty()) auth = req.get_header_value("x-goog-api-key");
      bool stream = which == api::gemini ? req.path.find(":streamGenerateContent") != std::string::npos
                                         : body.value("stream", false);
      auto [reply, fault] = choose(body, auth, which);
      respond(which, body, stream, reply, fault, &res);
    };
  };
  m_server->Post("/v1/chat/completions", handler(api::openai));
  m_server->Post("/v1/messages", handler(api::anthropic));
  m_server->Post(R"(/v1beta/models/([^:/]+):(generateContent|streamGenerateContent))", handler(api::gemini));
  m_port = m_server->bind_to_any_port("127.0.0.1");
  m_thread = std::thread([this] { m_server->listen_after_bind(); });
  while (!m_server->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

fake_llm_server::~fake_llm_server() {
  m_server->stop();
  if (m_thread.joinable()) m_thread.join();
}

std::string fake_llm_server::base_url() const { return "http://127.0.0.1:" + std::to_string(m_port) + "/v1"; }
std::string fake_llm_server::root_url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

void fake_llm_server::set_reply(int turn, std::string content, std::string reasoning) {
  std::lock_guard lock(m_mutex);
  m_replies[turn] = {std::move(content), std::move(reasoning)};
}

void fake_llm_server::set_default_reply(std::string content) {
  std::lock_guard lock(m_mutex);
  m_default_reply = std::move(content);
}

void fake_llm_server::add_rule(std::string needle, std::vector<std::string> replies, int turn) {
  std::lock_guard lock(m_mutex);
  m_rules.push_back({std::move(needle), turn, std::move(replies), 0});
}

void fake_llm_server::set_delay_ms(int ms) {
  std::lock_guard lock(m_mutex);
  m_delay_ms = ms;
}

void fake_llm_server::set_stream_event_delay_ms(int ms) {
  std::lock_guard lock(m_mutex);
  m_event_delay_ms = ms;
}

void fake_llm_server::set_stream_piece(std::size_t chars) {
  std::lock_guard lock(m_mutex);
  m_piece = chars == 0 ? 1 : chars;
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
