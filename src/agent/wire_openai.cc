// OpenAI-compatible chat completions: POST {base_url}/chat/completions.
#include <fmt/format.h>

#include "agent/wire_format.h"

namespace ptxbench::agent {
namespace {

std::string text_of(const ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::string out;
  if (v.is_array())  // content parts: [{"type": "text", "text": ...}]
    for (const auto& part : v)
      if (part.is_object() && part.contains("text") && part["text"].is_string()) out += part["text"].get<std::string>();
  return out;
}

// Chunks carry choices[0].delta.{content, reasoning_content | reasoning} and finally finish_reason;
// with include_usage a last chunk has usage and no choices; then "data: [DONE]".
class openai_stream final : public stream_assembler {
 public:
  status on_event(const sse_event& e) override {
    ++m_events;
    if (e.data == "[DONE]") {
      m_done = true;
      return ok();
    }
    auto j = ordered_json::parse(e.data, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return make_error("stream: an event is not JSON: " + e.data.substr(0, 120));
    if (j.contains("error")) return make_error("error in stream: " + provider_error_text(j.dump()));
    for (const char* key : {"id", "model", "created", "system_fingerprint", "provider"})
      if (j.contains(key)) m_meta[key] = j[key];
    if (j.contains("usage") && j["usage"].is_object()) m_usage = j["usage"];
    if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) return ok();
    const auto& c = j["choices"][0];
    if (c.contains("delta") && c["delta"].is_object()) {
      const auto& d = c["delta"];
      if (d.contains("content") && d["content"].is_string()) m_content += d["content"].get<std::string>();
      for (const char* key : {"reasoning_content", "reasoning"})
        if (d.contains(key) && d[key].is_string()) {
          m_reasoning += d[key].get<std::string>();
          break;
        }
    }
    if (c.contains("finish_reason") && c["finish_reason"].is_string()) m_finish = c["finish_reason"].get<std::string>();
    return ok();
  }
  bool complete() const override { return m_done || !m_finish.empty(); }
  ordered_json body() const override {
    ordered_json message = {{"role", "assistant"}, {"content", m_content}};
    if (!m_reasoning.empty()) message["reasoning_content"] = m_reasoning;
    ordered_json b = m_meta;
    b["object"] = "chat.completion";
    b["choices"] = ordered_json::array({{{"index", 0}, {"message", message},
                                         {"finish_reason", m_finish.empty() ? ordered_json(nullptr) : ordered_json(m_finish)}}});
    if (!m_usage.is_null()) b["usage"] = m_usage;
    b["stream"] = {{"events", m_events}, {"completed_by", m_done ? "[DONE]" : m_finish.empty() ? "nothing" : "finish_reason (no [DONE])"}};
    return b;
  }

 private:
  ordered_json m_meta = ordered_json::object(), m_usage;
  std::string m_content, m_reasoning, m_finish;
  int m_events = 0;
  bool m_done = false;
};

class openai_wire final : public wire_format {
 public:
  http_request encode(const model_spec& m, const completion_request& r, const std::string& api_key) const override {
    ordered_json body;
    body["model"] = m.model_id;
    ordered_json msgs = ordered_json::array();
    for (const auto& msg : r.messages) {
      ordered_json o = {{"role", msg.role}, {"content", msg.content}};
      if (msg.role == "assistant" && m.send_reasoning_content && !msg.reasoning_content.empty())
        o["reasoning_content"] = msg.reasoning_content;
      msgs.push_back(std::move(o));
    }
    body["messages"] = std::move(msgs);
    body.update(m.request, true);
    if (m.send_seed && r.seed) body["seed"] = static_cast<int64_t>(*r.seed & 0x7fffffff);
    if (m.stream && !m.request.contains("stream")) {  // the model's own request settings win
      body["stream"] = true;
      if (!body.contains("stream_options")) body["stream_options"] = {{"include_usage", true}};  // usage in the last chunk
    }
    http_request req;
    req.url = m.base_url + "/chat/completions";
    req.headers.emplace_back("Content-Type", "application/json");
    if (!api_key.empty()) req.headers.emplace_back("Authorization", "Bearer " + api_key);
    finish_json_request(req, m, body);
    return req;
  }

  result<completion> decode(const ordered_json& body) const override {
    if (!body.is_object()) return make_error("response is not a JSON object");
    if (!body.contains("choices") || !body["choices"].is_array() || body["choices"].empty()) {
      if (body.contains("error")) return make_error("error in response: " + provider_error_text(body.dump()));
      return make_error("response has no choices");
    }
    const auto& choice = body["choices"][0];
    if (!choice.is_object() || !choice.contains("message") || !choice["message"].is_object())
      return make_error("choices[0] has no message");
    const auto& msg = choice["message"];
    completion c;
    if (msg.contains("content")) c.content = text_of(msg["content"]);
    // vLLM/SGLang/DeepSeek say reasoning_content; OpenRouter and newer vLLM say reasoning.
    for (const char* key : {"reasoning_content", "reasoning"})
      if (c.reasoning_content.empty() && msg.contains(key) && msg[key].is_string())
        c.reasoning_content = msg[key].get<std::string>();
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string())
      c.finish_reason = choice["finish_reason"].get<std::string>();
    if (body.contains("usage") && body["usage"].is_object()) {
      const auto& u = body["usage"];
      c.usage.prompt_tokens = usage_count(u, "prompt_tokens");
      c.usage.completion_tokens = usage_count(u, "completion_tokens");
      if (u.contains("completion_tokens_details") && u["completion_tokens_details"].is_object() &&
          u["completion_tokens_details"].contains("reasoning_tokens") &&
          u["completion_tokens_details"]["reasoning_tokens"].is_number())
        c.usage.reasoning_tokens = u["completion_tokens_details"]["reasoning_tokens"].get<int64_t>();
      if (u.contains("prompt_tokens_details")) c.usage.cached_prompt_tokens = usage_count(u["prompt_tokens_details"], "cached_tokens");
      if (u.contains("cost") && u["cost"].is_number()) c.cost_usd = u["cost"].get<double>();  // OpenRouter
    }
    c.response = body;
    return c;
  }

  std::unique_ptr<stream_assembler> make_stream_assembler() const override { return std::make_unique<openai_stream>(); }
};

}  // namespace

std::unique_ptr<wire_format> make_openai_wire() { return std::make_unique<openai_wire>(); }

}  // namespace ptxbench::agent
