// Anthropic Messages: POST {base_url}/v1/messages, extended thinking through request.thinking.
#include "agent/wire_format.h"

namespace ptxbench::agent {
namespace {

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
};

}  // namespace

std::unique_ptr<wire_format> make_anthropic_wire() { return std::make_unique<anthropic_wire>(); }

}  // namespace ptxbench::agent
