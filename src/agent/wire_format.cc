#include "agent/wire_format.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/text.h"

namespace ptxbench::agent {

std::unique_ptr<wire_format> make_openai_wire();
std::unique_ptr<wire_format> make_anthropic_wire();
std::unique_ptr<wire_format> make_gemini_wire();

std::unique_ptr<wire_format> make_wire_format(api_kind api) {
  switch (api) {
    case api_kind::openai: return make_openai_wire();
    case api_kind::anthropic: return make_anthropic_wire();
    case api_kind::gemini: return make_gemini_wire();
    case api_kind::replay: return nullptr;
  }
  return nullptr;
}

int64_t usage_count(const ordered_json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_number() ? obj[key].get<int64_t>() : 0;
}

void finish_json_request(http_request& req, const model_spec& m, const ordered_json& body) {
  for (const auto& h : m.headers) req.headers.push_back(h);
  req.body = body.dump();
  req.timeout_s = m.timeout_s;
  req.connect_timeout_s = m.connect_timeout_s;
  if (m.stream) req.idle_timeout_s = m.stream_idle_timeout_s;
}

std::string provider_error_text(const std::string& body) {
  auto j = ordered_json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object()) {
    if (j.contains("error")) {
      const auto& e = j["error"];
      if (e.is_string()) return e.get<std::string>();
      if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
    }
    for (const char* key : {"message", "detail"})
      if (j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  }
  std::string text = body.substr(0, 300);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text.find_first_not_of(" \t\r") == std::string::npos ? "(empty body)" : text;
}

bool looks_like_context_overflow(long status, const std::string& body) {
  if (status != 400 && status != 413 && status != 422) return false;
  const std::string text = lower(body);
  static constexpr std::array<const char*, 10> k_markers = {
      "context_length_exceeded", "maximum context length", "context length", "context window",
      "prompt is too long",      "too many tokens",        "exceeds the maximum number of tokens",
      "input token count",       "maximum input length",   "reduce the length"};
  return std::any_of(k_markers.begin(), k_markers.end(), [&](const char* m) { return text.find(m) != std::string::npos; });
}

}  // namespace ptxbench::agent
