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
};

}  // namespace

std::unique_ptr<wire_format> make_openai_wire() { return std::make_unique<openai_wire>(); }

}  // namespace ptxbench::agent
