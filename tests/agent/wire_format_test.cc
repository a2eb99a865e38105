#include "agent/wire_format.h"

#include <gtest/gtest.h>

namespace ptxbench::agent {
namespace {

completion_request two_turns() {
  completion_request r;
  r.messages = {{"system", "be fast", ""},
                {"user", "task", ""},
                {"assistant", "```cuda\nk\n```", "I think"},
                {"user", "<returncode>1</returncode>", ""}};
  r.seed = 42;
  return r;
}

std::string header(const http_request& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return "";
}

TEST(WireOpenAI, MergesSamplingParametersAndSendsKey) {
  model_spec m;
  m.api = api_kind::openai;
  m.model_id = "Qwen/Qwen3.6-27B";
  m.base_url = "http://h:1/v1";
  m.request = {{"temperature", 1.0}, {"top_p", 0.95}, {"top_k", 20}, {"presence_penalty", 1.5}, {"max_tokens", 81920}};
  m.send_seed = true;
  auto req = make_wire_format(api_kind::openai)->encode(m, two_turns(), "sk-test");
  EXPECT_EQ(req.url, "http://h:1/v1/chat/completions");
  EXPECT_EQ(header(req, "Authorization"), "Bearer sk-test");
  auto body = ordered_json::parse(req.body);
  EXPECT_EQ(body["model"], "Qwen/Qwen3.6-27B");
  EXPECT_EQ(body["top_k"], 20);
  EXPECT_EQ(body["presence_penalty"], 1.5);
  EXPECT_EQ(body["max_tokens"], 81920);
  EXPECT_EQ(body["seed"], 42);
  ASSERT_EQ(body["messages"].size(), 4u);
  EXPECT_FALSE(body["messages"][2].contains("reasoning_content"));  // not echoed unless asked
  m.send_reasoning_content = true;
  body = ordered_json::parse(make_wire_format(api_kind::openai)->encode(m, two_turns(), "").body);
  EXPECT_EQ(body["messages"][2]["reasoning_content"], "I think");
}

TEST(WireOpenAI, DecodesReasoningUsageAndOpenRouterCost) {
  auto body = ordered_json::parse(R"({"choices":[{"message":{"role":"assistant","content":"hi","reasoning":"hmm"},
    "finish_reason":"length"}],"usage":{"prompt_tokens":100,"completion_tokens":50,
    "completion_tokens_details":{"reasoning_tokens":40},"prompt_tokens_details":{"cached_tokens":64},"cost":0.0123}})");
  auto c = make_wire_format(api_kind::openai)->decode(body);
  ASSERT_TRUE(c) << c.err().message;
  EXPECT_EQ(c->content, "hi");
  EXPECT_EQ(c->reasoning_content, "hmm");
  EXPECT_EQ(c->finish_reason, "length");
  EXPECT_EQ(c->usage.prompt_tokens, 100);
  EXPECT_EQ(c->usage.reasoning_tokens, 40);
  EXPECT_EQ(c->usage.cached_prompt_tokens, 64);
  EXPECT_DOUBLE_EQ(c->cost_usd.value(), 0.0123);
  auto err = make_wire_format(api_kind::openai)->decode(ordered_json::parse(R"({"error":{"message":"upstream 502"}})"));
  ASSERT_FALSE(err);
  EXPECT_NE(err.err().message.find("upstream 502"), std::string::npos);
}

TEST(WireAnthropic, SystemApartThinkingKeptUsageSummed) {
  model_spec m;
  m.api = api_kind::anthropic;
  m.model_id = "claude-opus-4-8";
  m.base_url = "https://api.anthropic.com";
  m.request = {{"max_tokens", 128000}, {"thinking", {{"type", "adaptive"}}}};
  auto req = make_wire_format(api_kind::anthropic)->encode(m, two_turns(), "k");
  EXPECT_EQ(req.url, "https://api.anthropic.com/v1/messages");
  EXPECT_EQ(header(req, "x-api-key"), "k");
  EXPECT_EQ(header(req, "anthropic-version"), "2023-06-01");
  auto body = ordered_json::parse(req.body);
  EXPECT_EQ(body["system"], "be fast");
  EXPECT_EQ(body["messages"].size(), 3u);
  EXPECT_EQ(body["messages"][0]["role"], "user");
  EXPECT_EQ(body["thinking"]["type"], "adaptive");
  auto c = make_wire_format(api_kind::anthropic)->decode(ordered_json::parse(R"({"type":"message","content":[
    {"type":"thinking","thinking":"plan","signature":"x"},{"type":"text","text":"code"}],"stop_reason":"end_turn",
    "usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":7}})"));
  ASSERT_TRUE(c) << c.err().message;
  EXPECT_EQ(c->content, "code");
  EXPECT_EQ(c->reasoning_content, "plan");
  EXPECT_EQ(c->usage.prompt_tokens, 100);
  EXPECT_EQ(c->usage.cached_prompt_tokens, 90);
  EXPECT_FALSE(c->usage.reasoning_tokens);
}

TEST(WireGemini, RolesThoughtsAndUsage) {
  model_spec m;
  m.api = api_kind::gemini;
  m.model_id = "gemini-3.1-pro-preview";
  m.base_url = "https://generativelanguage.googleapis.com";
  m.request = {{"generationConfig", {{"maxOutputTokens", 65536}}}};
  auto req = make_wire_format(api_kind::gemini)->encode(m, two_turns(), "g");
  EXPECT_EQ(req.url, "https://generativelanguage.googleapis.com/v1beta/models/gemini-3.1-pro-preview:generateContent");
  EXPECT_EQ(header(req, "x-goog-api-key"), "g");
  auto body = ordered_json::parse(req.body);
  EXPECT_EQ(body["systemInstruction"]["parts"][0]["text"], "be fast");
  EXPECT_EQ(body["contents"][1]["role"], "model");
  EXPECT_EQ(body["generationConfig"]["maxOutputTokens"], 65536);
  auto c = make_wire_format(api_kind::gemini)->decode(ordered_json::parse(R"({"candidates":[{"content":{"parts":[
    {"text":"thinking...","thought":true},{"text":"answer"}]},"finishReason":"STOP"}],
    "usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":5,"thoughtsTokenCount":30}})"));
  ASSERT_TRUE(c) << c.err().message;
  EXPECT_EQ(c->content, "answer");
  EXPECT_EQ(c->reasoning_content, "thinking...");
  EXPECT_EQ(c->usage.completion_tokens, 35);
  EXPECT_EQ(c->usage.reasoning_tokens, 30);
}

TEST(WireFormat, ErrorTextAndContextOverflow) {
  EXPECT_EQ(provider_error_text(R"({"error":{"message":"Invalid API key"}})"), "Invalid API key");
  EXPECT_EQ(provider_error_text(R"({"object":"error","message":"bad"})"), "bad");
  EXPECT_EQ(provider_error_text("<html>502</html>"), "<html>502</html>");
  EXPECT_EQ(provider_error_text(""), "(empty body)");
  EXPECT_TRUE(looks_like_context_overflow(
      400, R"({"error":{"message":"This model's maximum context length is 32768 tokens. However, you requested 90000"}})"));
  EXPECT_TRUE(looks_like_context_overflow(400, R"({"error":{"message":"prompt is too long: 210000 tokens > 200000"}})"));
  EXPECT_FALSE(looks_like_context_overflow(400, R"({"error":{"message":"unknown parameter top_k"}})"));
  EXPECT_FALSE(looks_like_context_overflow(500, R"({"error":{"message":"maximum context length"}})"));
}

}  // namespace
}  // namespace ptxbench::agent
