// Anthropic Messages: POST {base_url}/v1/messages, extended thinking through request.thinking.
#include "agent/wire_format.h"

namespace ptxbench::agent {
namespace {

// Events: message_start (id, model, input usage), content_block_start/delta/stop (text_delta,
// thinking_delta; signature deltas ignored), message_delta (stop_reason, output_tokens), message_stop,
// ping, error.
class anthropic_stream final : public stream_assembler {
 public:
  status on_event(const sse_event& e) override {
    ++m_events;
    auto j = ordered_json::parse(e.data, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return make_error("stream: an event is not JSON: " + e.data.substr(0, 120));
    std::string type = j.value("type", e.event);
    if (type == "error") return make_error("error in stream: " + provider_error_text(j.dump()));
    if (type == "message_start" && j.contains("message") && j["message"].is_object()) {
      m_message = j["message"];
      m_message["content"] = ordered_json::array();
    } else if (type == "content_block_start" && j.contains("content_block")) {
      std::size_t i = j.value("index", m_message["content"].size());
      while (m_message["content"].size() <= i) m_message["content"].push_back(ordered_json::object());
      m_message["content"][i] = j["content_block"];
    } else if (type == "content_block_delta" && j.contains("delta") && j["delta"].is_object()) {
      std::size_t i = j.value("index", std::size_t{0});
      while (m_message["content"].size() <= i) m_message["content"].push_back({{"type", "text"}, {"text", ""}});
      auto& block = m_message["content"][i];
      const auto& d = j["delta"];
      std::string dt = d.value("type", "");
      if (dt == "text_delta") block["text"] = block.value("text", "") + d.value("text", "");
      else if (dt == "thinking_delta") block["thinking"] = block.value("thinking", "") + d.value("thinking", "");
    } else if (type == "message_delta") {
      if (j.contains("delta") && j["delta"].is_object() && j["delta"].contains("stop_reason"))
        m_message["stop_reason"] = j["delta"]["stop_reason"];
      if (j.contains("usage") && j["usage"].is_object())
        for (const auto& [k, v] : j["usage"].items()) m_message["usage"][k] = v;
    } else if (type == "message_stop") {
      m_stopped = true;
    }
    return ok();
  }
  bool complete() const override { return m_stopped; }
  ordered_json body() const override {
    ordered_json b = m_message;
    if (!b.contains("content")) b["content"] = ordered_json::array();
    b["stream"] = {{"events", m_events}, {"completed_by", m_stopped ? "message_stop" : "nothing"}};
    return b;
  }

 private:
  ordered_json m_message = {{"type", "message"}, {"role", "assistant"}, {"content", ordered_json::array()}};
  int m_events = 0;
  bool m_stopped = false;
};

class anthropic_wire final : public wire_format {
 public:
  http_request encode(const model_spec& m, const completion_request& r, const std::string& api_key) const override {
    ordered_json body;
    body["model"] = m.model_id;
    std::string system;
    ordered_json msgs = ordered_json::array();
    for (const auto& msg : r.messages) {
      if (msg.role == "system") {
        system += (system.empty() ? "" : "\n\n") + msg.content;
        continue;
      }
      std::string role = msg.role == "assistant" ? "assistant" : "user";
      // The API wants alternating roles: fold a repeated role into the previous message.
      if (!msgs.empty() && msgs.back()["role"] == role) {
        msgs.back()["content"] = msgs.back()["content"].get<std::string>() + "\n\n" + msg.content;
        continue;
      }
      msgs.push_back({{"role", role}, {"content", msg.content}});
    }
    if (!system.empty()) body["system"] = system;
    body["messages"] = std::move(msgs);
    body.update(m.request, true);
    if (m.stream && !m.request.contains("stream")) body["stream"] = true;
    http_request req;
    req.url = m.base_url + "/v1/messages";
    req.headers.emplace_back("content-type", "application/json");
    req.headers.emplace_back("anthropic-version", "2023-06-01");
    if (!api_key.empty()) req.headers.emplace_back("x-api-key", api_key);
    finish_json_request(req, m, body);
    return req;
  }

  result<completion> decode(const ordered_json& body) const override {
    if (!body.is_object()) return make_error("response is not a JSON object");
    if (body.value("type", "") == "error" || !body.contains("content") || !body["content"].is_array())
      return make_error("response is not a message: " + provider_error_text(body.dump()));
    completion c;
    for (const auto& block : body["content"]) {
      if (!block.is_object()) continue;
      std::string type = block.value("type", "");
      if (type == "text" && block.contains("text") && block["text"].is_string()) {
        c.content += block["text"].get<std::string>();
      } else if (type == "thinking" && block.contains("thinking") && block["thinking"].is_string()) {
        if (!c.reasoning_content.empty()) c.reasoning_content += "\n";
        c.reasoning_content += block["thinking"].get<std::string>();
      } else if (type == "redacted_thinking") {
        if (!c.reasoning_content.empty()) c.reasoning_content += "\n";
        c.reasoning_content += "[redacted thinking]";
      }
    }
    if (body.contains("stop_reason") && body["stop_reason"].is_string()) c.finish_reason = body["stop_reason"].get<std::string>();
    if (body.contains("usage") && body["usage"].is_object()) {
      const auto& u = body["usage"];
      // input_tokens excludes cache reads and writes; report the whole prompt like the other APIs.
      int64_t cache_read = usage_count(u, "cache_read_input_tokens");
      c.usage.prompt_tokens = usage_count(u, "input_tokens") + cache_read + usage_count(u, "cache_creation_input_tokens");
      c.usage.cached_prompt_tokens = cache_read;
      c.usage.completion_tokens = usage_count(u, "output_tokens");  // thinking included; not reported apart
    }
    c.response = body;
    return c;
  }

  std::unique_ptr<stream_assembler> make_stream_assembler() const override { return std::make_unique<anthropic_stream>(); }
};

}  // namespace

std::unique_ptr<wire_format> make_anthropic_wire() { return std::make_unique<anthropic_wire>(); }

}  // namespace ptxbench::agent
