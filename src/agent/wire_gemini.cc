// Google Gemini: POST {base_url}/v1beta/models/{model}:generateContent.
#include "agent/wire_format.h"

namespace ptxbench::agent {
namespace {

// Each event is a GenerateContentResponse with the next parts; usageMetadata is cumulative (the last
// one counts); the final one has a finishReason.
class gemini_stream final : public stream_assembler {
 public:
  status on_event(const sse_event& e) override {
    ++m_events;
    auto j = ordered_json::parse(e.data, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return make_error("stream: an event is not JSON: " + e.data.substr(0, 120));
    if (j.contains("error")) return make_error("error in stream: " + provider_error_text(j.dump()));
    if (j.contains("promptFeedback")) m_body["promptFeedback"] = j["promptFeedback"];
    if (j.contains("usageMetadata")) m_body["usageMetadata"] = j["usageMetadata"];
    if (j.contains("modelVersion")) m_body["modelVersion"] = j["modelVersion"];
    if (!j.contains("candidates") || !j["candidates"].is_array() || j["candidates"].empty()) return ok();
    const auto& c = j["candidates"][0];
    if (c.contains("content") && c["content"].is_object() && c["content"].contains("parts") && c["content"]["parts"].is_array())
      for (const auto& part : c["content"]["parts"]) {
        if (!part.is_object() || !part.contains("text") || !part["text"].is_string()) continue;
        bool thought = part.value("thought", false);
        // Consecutive parts of one kind are joined, so the assembled reply has few parts.
        if (!m_parts.empty() && m_parts.back().value("thought", false) == thought)
          m_parts.back()["text"] = m_parts.back()["text"].get<std::string>() + part["text"].get<std::string>();
        else
          m_parts.push_back(thought ? ordered_json{{"text", part["text"]}, {"thought", true}} : ordered_json{{"text", part["text"]}});
      }
    if (c.contains("finishReason") && c["finishReason"].is_string()) m_finish = c["finishReason"].get<std::string>();
    return ok();
  }
  bool complete() const override { return !m_finish.empty(); }
  ordered_json body() const override {
    ordered_json b = m_body;
    ordered_json cand = {{"content", {{"role", "model"}, {"parts", m_parts}}}};
    if (!m_finish.empty()) cand["finishReason"] = m_finish;
    if (!m_parts.empty() || !m_finish.empty()) b["candidates"] = ordered_json::array({cand});
    b["stream"] = {{"events", m_events}, {"completed_by", m_finish.empty() ? "nothing" : "finishReason"}};
    return b;
  }

 private:
  ordered_json m_body = ordered_json::object(), m_parts = ordered_json::array();
  std::string m_finish;
  int m_events = 0;
};

class gemini_wire final : public wire_format {
 public:
  http_request encode(const model_spec& m, const completion_request& r, const std::string& api_key) const override {
    ordered_json body;
    std::string system;
    ordered_json contents = ordered_json::array();
    for (const auto& msg : r.messages) {
      if (msg.role == "system") {
        system += (system.empty() ? "" : "\n\n") + msg.content;
        continue;
      }
      contents.push_back({{"role", msg.role == "assistant" ? "model" : "user"},
                          {"parts", ordered_json::array({{{"text", msg.content}}})}});
    }
    if (!system.empty()) body["systemInstruction"] = {{"parts", ordered_json::array({{{"text", system}}})}};
    body["contents"] = std::move(contents);
    body.update(m.request, true);
    http_request req;
    req.url = m.base_url + "/v1beta/models/" + m.model_id + (m.stream ? ":streamGenerateContent?alt=sse" : ":generateContent");
    req.headers.emplace_back("Content-Type", "application/json");
    if (!api_key.empty()) req.headers.emplace_back("x-goog-api-key", api_key);
    finish_json_request(req, m, body);
    return req;
  }

  result<completion> decode(const ordered_json& body) const override {
    if (!body.is_object()) return make_error("response is not a JSON object");
    if (!body.contains("candidates") || !body["candidates"].is_array() || body["candidates"].empty()) {
      if (body.contains("promptFeedback") && body["promptFeedback"].contains("blockReason"))
        return make_error("prompt blocked: " + body["promptFeedback"]["blockReason"].dump());
      return make_error("response has no candidates: " + provider_error_text(body.dump()));
    }
    const auto& cand = body["candidates"][0];
    completion c;
    if (cand.contains("content") && cand["content"].is_object() && cand["content"].contains("parts") &&
        cand["content"]["parts"].is_array()) {
      for (const auto& part : cand["content"]["parts"]) {
        if (!part.is_object() || !part.contains("text") || !part["text"].is_string()) continue;
        std::string& into = part.value("thought", false) ? c.reasoning_content : c.content;
        into += part["text"].get<std::string>();
      }
    }
    if (cand.contains("finishReason") && cand["finishReason"].is_string()) c.finish_reason = cand["finishReason"].get<std::string>();
    if (body.contains("usageMetadata") && body["usageMetadata"].is_object()) {
      const auto& u = body["usageMetadata"];
      int64_t thoughts = usage_count(u, "thoughtsTokenCount");
      c.usage.prompt_tokens = usage_count(u, "promptTokenCount");
      c.usage.cached_prompt_tokens = usage_count(u, "cachedContentTokenCount");
      c.usage.completion_tokens = usage_count(u, "candidatesTokenCount") + thoughts;  // candidates excludes thoughts
      c.usage.reasoning_tokens = thoughts;
    }
    c.response = body;
    return c;
  }

  std::unique_ptr<stream_assembler> make_stream_assembler() const override { return std::make_unique<gemini_stream>(); }
};

}  // namespace

std::unique_ptr<wire_format> make_gemini_wire() { return std::make_unique<gemini_wire>(); }

}  // namespace ptxbench::agent
