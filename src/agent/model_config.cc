#include "agent/model_config.h"

#include <cctype>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/text.h"
#include "suite/task.h"

namespace ptxbench::agent {
namespace {

constexpr const char* k_format = "ptxbench.models/1";

struct api_defaults {
  const char* base_url;
  const char* key_env;
};

api_defaults defaults_for(api_kind k) {
  switch (k) {
    case api_kind::openai: return {"https://api.openai.com/v1", "OPENAI_API_KEY"};
    case api_kind::anthropic: return {"https://api.anthropic.com", "ANTHROPIC_API_KEY"};
    case api_kind::gemini: return {"https://generativelanguage.googleapis.com", "GEMINI_API_KEY"};
    case api_kind::replay: return {"", ""};
  }
  return {"", ""};
}

// "http://HOST..." or "https://HOST...": a typo here ("localhost:8000/v1", "htp://...") would
// otherwise surface only after a trajectory's retries ran out, as an API failure (exit 3).
bool plausible_http_url(const std::string& url) {
  for (unsigned char c : url)
    if (c <= ' ' || c == 0x7f) return false;
  const std::string scheme = lower(url.substr(0, 8));
  std::size_t host = scheme.rfind("http://", 0) == 0 ? 7 : scheme.rfind("https://", 0) == 0 ? 8 : 0;
  return host != 0 && host < url.size() && url[host] != '/' && url[host] != ':' && url[host] != '?';
}

std::optional<api_kind> parse_api(const std::string& s) {
  if (s == "openai") return api_kind::openai;
  if (s == "anthropic") return api_kind::anthropic;
  if (s == "gemini") return api_kind::gemini;
  return std::nullopt;
}

std::optional<double> get_nonneg(const ordered_json& obj, std::string_view key, const std::string& path,
                                 json_errors& errs, bool required) {
  auto v = get_number(obj, key, path, errs, required);
  if (v && *v < 0) errs.add(json_child(path, key), "expected a value >= 0");
  return v;
}

void read_retry(const ordered_json& j, const std::string& path, json_errors& errs, retry_policy& r) {
  if (!expect_object(j, path, errs)) return;
  reject_unknown_keys(j, {"max_attempts", "base_delay_s", "max_delay_s", "max_retry_after_s"}, path, errs);
  if (auto v = get_int(j, "max_attempts", path, errs, false)) {
    if (*v < 1) errs.add(json_child(path, "max_attempts"), "expected an integer >= 1");
    r.max_attempts = static_cast<int>(*v);
  }
  if (auto v = get_nonneg(j, "base_delay_s", path, errs, false)) r.base_delay_s = *v;
  if (auto v = get_nonneg(j, "max_delay_s", path, errs, false)) r.max_delay_s = *v;
  if (auto v = get_nonneg(j, "max_retry_after_s", path, errs, false)) r.max_retry_after_s = *v;
}

std::optional<model_spec> read_model(const std::string& name, const ordered_json& j, const std::string& path,
                                     json_errors& errs) {
  if (!expect_object(j, path, errs)) return std::nullopt;
  reject_unknown_keys(j,
                      {"api", "model_id", "base_url", "base_url_env", "api_key_env", "api_key_required", "request",
                       "headers", "context_window_tokens", "price_usd_per_mtok", "timeout_s", "connect_timeout_s",
                       "retry", "send_reasoning_content", "send_seed", "stream", "stream_idle_timeout_s", "description"},
                      path, errs);
  model_spec m;
  m.name = name;
  auto api = get_string(j, "api", path, errs);
  if (!api) return std::nullopt;
  auto kind = parse_api(*api);
  if (!kind) {
    errs.add(json_child(path, "api"), fmt::format("unknown api '{}' (expected openai, anthropic or gemini)", *api));
    return std::nullopt;
  }
  m.api = *kind;
  auto defaults = defaults_for(m.api);
  m.model_id = get_string(j, "model_id", path, errs, false).value_or(name);
  m.base_url = get_string(j, "base_url", path, errs, false).value_or(defaults.base_url);
  m.base_url_env = get_string(j, "base_url_env", path, errs, false).value_or("");
  if (j.contains("api_key_env") && j["api_key_env"].is_null()) {
    m.api_key_env.clear();
  } else {
    m.api_key_env = get_string(j, "api_key_env", path, errs, false).value_or(defaults.key_env);
  }
  m.api_key_required = get_bool(j, "api_key_required", path, errs, false).value_or(!m.api_key_env.empty());
  if (j.contains("request")) {
    if (expect_object(j["request"], json_child(path, "request"), errs)) m.request = j["request"];
  }
  if (j.contains("headers") && expect_object(j["headers"], json_child(path, "headers"), errs)) {
    for (const auto& item : j["headers"].items()) {
      if (!item.value().is_string())
        errs.add(json_child(json_child(path, "headers"), item.key()), "expected a string");
      else
        m.headers.emplace_back(item.key(), item.value().get<std::string>());
    }
  }
  if (auto v = get_int(j, "context_window_tokens", path, errs, false)) {
    if (*v < 1024) errs.add(json_child(path, "context_window_tokens"), "expected an integer >= 1024");
    m.context_window_tokens = *v;
  }
  if (j.contains("price_usd_per_mtok") && !j["price_usd_per_mtok"].is_null()) {
    std::string pp = json_child(path, "price_usd_per_mtok");
    const auto& p = j["price_usd_per_mtok"];
    if (expect_object(p, pp, errs)) {
      reject_unknown_keys(p, {"input", "output", "cached_input"}, pp, errs);
      price_table t;
      t.input_usd_per_mtok = get_nonneg(p, "input", pp, errs, true).value_or(0);
      t.output_usd_per_mtok = get_nonneg(p, "output", pp, errs, true).value_or(0);
      t.cached_input_usd_per_mtok = get_nonneg(p, "cached_input", pp, errs, false);
      m.price = t;
    }
  }
  if (auto v = get_nonneg(j, "timeout_s", path, errs, false)) m.timeout_s = *v;
  if (auto v = get_nonneg(j, "connect_timeout_s", path, errs, false)) m.connect_timeout_s = *v;
  if (j.contains("retry")) read_retry(j["retry"], json_child(path, "retry"), errs, m.retry);
  m.send_reasoning_content = get_bool(j, "send_reasoning_content", path, errs, false).value_or(false);
  m.send_seed = get_bool(j, "send_seed", path, errs, false).value_or(false);
  m.stream = get_bool(j, "stream", path, errs, false).value_or(false);
  if (auto v = get_nonneg(j, "stream_idle_timeout_s", path, errs, false)) m.stream_idle_timeout_s = *v;
  m.description = get_string(j, "description", path, errs, false, false).value_or("");
  if (m.api == api_kind::anthropic && !m.request.contains("max_tokens"))
    errs.add(json_child(path, "request"), "the Anthropic Messages API needs request.max_tokens");
  return m;
}

}  // namespace

std::string api_kind_name(api_kind k) {
  switch (k) {
    case api_kind::openai: return "openai";
    case api_kind::anthropic: return "anthropic";
    case api_kind::gemini: return "gemini";
    case api_kind::replay: return "replay";
  }
  return "openai";
}

std::optional<int64_t> model_spec::max_output_tokens() const {
  for (const char* key : {"max_tokens", "max_completion_tokens"})
    if (request.contains(key) && request[key].is_number_integer()) return request[key].get<int64_t>();
  if (request.contains("generationConfig") && request["generationConfig"].is_object()) {
    const auto& g = request["generationConfig"];
    if (g.contains("maxOutputTokens") && g["maxOutputTokens"].is_number_integer())
      return g["maxOutputTokens"].get<int64_t>();
  }
  return std::nullopt;
}

result<model_catalog> model_catalog_from_json(const ordered_json& j, const std::string& what) {
  json_errors errs;
  model_catalog cat;
  if (!expect_object(j, "", errs)) return errs.to_error().with_context(what);
  reject_unknown_keys(j, {"format", "description", "models"}, "", errs);
  auto format = get_string(j, "format", "", errs);
  if (format && *format != k_format)
    errs.add("format", fmt::format("unsupported format '{}' (expected '{}')", *format, k_format));
  if (!j.contains("models")) {
    errs.add("models", "missing required field");
  } else if (expect_object(j["models"], "models", errs)) {
    for (const auto& item : j["models"].items()) {
      if (auto m = read_model(item.key(), item.value(), json_child("models", item.key()), errs))
        cat.models.emplace(item.key(), std::move(*m));
    }
  }
  if (!errs.empty()) return errs.to_error().with_context(what);
  return cat;
}

result<model_catalog> load_model_catalog(const std::filesystem::path& path) {
  auto text = read_text_file(path, 4u << 20);
  if (!text) return text.err();
  auto j = parse_json(*text, path.string());
  if (!j) return j.err();
  auto cat = model_catalog_from_json(*j, path.string());
  if (cat) cat->source = path;
  return cat;
}

result<model_spec> resolve_model(const std::string& name, const model_catalog& catalog,
                                 const std::string& base_url_override) {
  auto colon = name.find(':');
  model_spec m;
  if (auto it = catalog.models.find(name); it != catalog.models.end()) {
    m = it->second;
  } else if (colon != std::string::npos) {
    std::string prefix = name.substr(0, colon), rest = name.substr(colon + 1);
    if (rest.empty()) return make_error(fmt::format("--model {}: nothing after '{}:'", name, prefix));
    if (prefix == "replay") {
      m.name = name;
      m.api = api_kind::replay;
      m.model_id = "replay";
      m.replay_file = rest;
      m.api_key_required = false;
      m.retry.max_attempts = 1;
      return m;
    }
    auto kind = parse_api(prefix);
    if (!kind)
      return make_error(fmt::format("--model {}: unknown prefix '{}' (expected replay:, openai:, anthropic: or gemini:)",
                                    name, prefix));
    m.name = name;
    m.api = *kind;
    m.model_id = rest;
    m.base_url = defaults_for(*kind).base_url;
    m.api_key_env = defaults_for(*kind).key_env;
    if (*kind == api_kind::openai) m.base_url_env = "OPENAI_BASE_URL";
    // A local server (vLLM, SGLang, llama.cpp) usually needs no key: send one only if it is set.
    m.api_key_required = !(*kind == api_kind::openai && !base_url_override.empty());
    if (*kind == api_kind::anthropic) m.request["max_tokens"] = 32000;
  } else {
    std::vector<std::string> names;
    for (const auto& [n, _] : catalog.models) names.push_back(n);
    return make_error(unknown_name_message(
        "model", name, names,
        fmt::format("{} lists them; replay:FILE, openai:ID, anthropic:ID and gemini:ID work too",
                    catalog.source.empty() ? std::string("the models file") : catalog.source.string())));
  }
  if (!base_url_override.empty()) m.base_url = base_url_override;
  while (!m.base_url.empty() && m.base_url.back() == '/') m.base_url.pop_back();
  return m;
}

result<std::string> resolve_environment(model_spec& m, const env_lookup& env, bool base_url_overridden) {
  std::string url_from = base_url_overridden ? "--base-url" : fmt::format("model '{}': base_url", m.name);
  if (!m.base_url_env.empty() && !base_url_overridden) {
    if (auto v = env(m.base_url_env)) {
      m.base_url = *v;
      url_from = m.base_url_env;
      while (!m.base_url.empty() && m.base_url.back() == '/') m.base_url.pop_back();
    }
  }
  if (m.api != api_kind::replay && !plausible_http_url(m.base_url))
    return make_error(fmt::format("{} '{}': expected an http:// or https:// URL with a host, e.g. "
                                  "http://localhost:8000/v1",
                                  url_from, m.base_url));
  if (m.api_key_env.empty()) return std::string();
  auto key = env(m.api_key_env);
  if (key) return *key;
  if (m.api_key_required)
    return make_error(fmt::format("model '{}' needs an API key: set {}", m.name, m.api_key_env));
  return std::string();
}

ordered_json to_json(const model_spec& m) {
  ordered_json j;
  j["model_name"] = m.name;
  j["api"] = api_kind_name(m.api);
  j["model_id"] = m.model_id;
  if (m.api == api_kind::replay) {
    j["replay_file"] = m.replay_file;
    return j;
  }
  j["base_url"] = m.base_url;
  j["api_key_env"] = m.api_key_env.empty() ? ordered_json(nullptr) : ordered_json(m.api_key_env);
  j["request"] = m.request;
  ordered_json headers = ordered_json::object();
  for (const auto& [k, v] : m.headers) headers[k] = v;
  j["headers"] = headers;
  j["context_window_tokens"] = m.context_window_tokens ? ordered_json(*m.context_window_tokens) : ordered_json(nullptr);
  if (m.price) {
    j["price_usd_per_mtok"] = {{"input", m.price->input_usd_per_mtok}, {"output", m.price->output_usd_per_mtok}};
    if (m.price->cached_input_usd_per_mtok) j["price_usd_per_mtok"]["cached_input"] = *m.price->cached_input_usd_per_mtok;
  } else {
    j["price_usd_per_mtok"] = nullptr;
  }
  j["timeout_s"] = m.timeout_s;
  j["retry"] = {{"max_attempts", m.retry.max_attempts}, {"base_delay_s", m.retry.base_delay_s},
                {"max_delay_s", m.retry.max_delay_s}, {"max_retry_after_s", m.retry.max_retry_after_s}};
  j["send_reasoning_content"] = m.send_reasoning_content;
  j["send_seed"] = m.send_seed;
  if (m.stream) {  // written only when on, so files of non-streaming runs stay as they were
    j["stream"] = true;
    j["stream_idle_timeout_s"] = m.stream_idle_timeout_s;
  }
  return j;
}

}  // namespace ptxbench::agent
