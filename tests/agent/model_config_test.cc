#include "agent/model_config.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace ptxbench::agent {
namespace {

TEST(ModelConfig, ShippedFileLoadsWithThePapersQwenSettings) {
  auto cat = load_model_catalog(ptxbench::testing::repo_root() / "configs" / "models.json");
  ASSERT_TRUE(cat) << cat.err().message;
  const auto& q = cat->models.at("Qwen3.6-27B");
  EXPECT_EQ(q.api, api_kind::openai);
  EXPECT_EQ(q.request["temperature"], 1.0);
  EXPECT_EQ(q.request["top_p"], 0.95);
  EXPECT_EQ(q.request["top_k"], 20);
  EXPECT_EQ(q.request["presence_penalty"], 1.5);
  EXPECT_EQ(q.max_output_tokens(), 81920);
  EXPECT_FALSE(q.api_key_required);
  EXPECT_EQ(cat->models.at("claude-opus-4.8-xhigh").api, api_kind::anthropic);
  EXPECT_EQ(cat->models.at("gemini-3.1-pro-preview").max_output_tokens(), 65536);
  EXPECT_EQ(cat->models.at("GLM-5.2").api_key_env, "OPENROUTER_API_KEY");
}

TEST(ModelConfig, ErrorsNameTheJsonPath) {
  auto bad = model_catalog_from_json(ordered_json::parse(R"({"format":"ptxbench.models/1","models":{
    "m":{"api":"openai","temperature":1.0}}})"), "models.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.err().message.find("models.json: models.m.temperature: unknown field"), std::string::npos)
      << bad.err().message;
  auto api = model_catalog_from_json(ordered_json::parse(R"({"format":"ptxbench.models/1","models":{"m":{"api":"cohere"}}})"),
                                     "f");
  ASSERT_FALSE(api);
  EXPECT_NE(api.err().message.find("models.m.api"), std::string::npos);
  auto claude = model_catalog_from_json(ordered_json::parse(R"({"format":"ptxbench.models/1","models":{"c":{"api":"anthropic"}}})"),
                                        "f");
  ASSERT_FALSE(claude);
  EXPECT_NE(claude.err().message.find("max_tokens"), std::string::npos);
}

TEST(ModelConfig, ResolvesPrefixesAndSuggestsNames) {
  model_catalog cat;
  cat.models["GLM-5.2"].name = "GLM-5.2";
  auto replay = resolve_model("replay:examples/x.json", cat, "");
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->api, api_kind::replay);
  EXPECT_EQ(replay->replay_file, "examples/x.json");
  auto local = resolve_model("openai:qwen", cat, "http://localhost:8080/v1/");
  ASSERT_TRUE(local);
  EXPECT_EQ(local->base_url, "http://localhost:8080/v1");
  EXPECT_FALSE(local->api_key_required);
  auto typo = resolve_model("GLM-5.3", cat, "");
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.err().message.find("did you mean 'GLM-5.2'"), std::string::npos) << typo.err().message;
}

// Issue 12: a base URL that cannot be one is refused before any call (it was retried six times and
// ended the run as an API failure, exit 3).
TEST(ModelConfig, ABaseUrlMustBeHttpWithAHost) {
  model_catalog cat;
  auto none = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  for (const std::string url : {"notaurl", "localhost:8000/v1", "ftp://x", "http://", "https:///v1", "http://a b"}) {
    auto m = resolve_model("openai:qwen", cat, url);
    ASSERT_TRUE(m) << url;
    auto r = resolve_environment(*m, none, true);
    ASSERT_FALSE(r) << url;
    EXPECT_EQ(r.err().message, "--base-url '" + m->base_url +
                                   "': expected an http:// or https:// URL with a host, e.g. http://localhost:8000/v1");
  }
  for (const std::string url : {"http://localhost:8000/v1", "HTTPS://api.example.com", "http://10.0.0.1:30000"}) {
    auto m = resolve_model("openai:qwen", cat, url);
    ASSERT_TRUE(m) << url;
    EXPECT_TRUE(resolve_environment(*m, none, true)) << url;
  }
  // From the environment, the message names the variable.
  auto m = resolve_model("openai:qwen", cat, "");
  ASSERT_TRUE(m);
  auto env = [](const std::string& n) -> std::optional<std::string> {
    if (n == "OPENAI_BASE_URL") return std::string("localhost:8000");
    if (n == "OPENAI_API_KEY") return std::string("k");
    return std::nullopt;
  };
  auto r = resolve_environment(*m, env, false);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.err().message,
            "OPENAI_BASE_URL 'localhost:8000': expected an http:// or https:// URL with a host, e.g. http://localhost:8000/v1");
}

TEST(ModelConfig, MissingKeyNamesTheVariableAndKeysAreNeverSerialised) {
  model_catalog cat;
  auto m = resolve_model("anthropic:claude-x", cat, "");
  ASSERT_TRUE(m);
  auto none = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  auto missing = resolve_environment(*m, none, false);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.err().message, "model 'anthropic:claude-x' needs an API key: set ANTHROPIC_API_KEY");
  auto env = [](const std::string& n) -> std::optional<std::string> {
    return n == "ANTHROPIC_API_KEY" ? std::optional<std::string>("secret-123") : std::nullopt;
  };
  auto key = resolve_environment(*m, env, false);
  ASSERT_TRUE(key);
  EXPECT_EQ(*key, "secret-123");
  EXPECT_EQ(to_json(*m).dump().find("secret-123"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::agent
