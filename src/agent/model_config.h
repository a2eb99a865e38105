#pragma once
// What PTXBench knows about each model: which API it speaks, where, with which key and sampling
// parameters, its context window and its price. Read from configs/models.json (data, not code);
// `replay:FILE` and `openai:ID` / `anthropic:ID` / `gemini:ID` name models without a config entry.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/retry.h"
#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::agent {

enum class api_kind { openai, anthropic, gemini, replay };

/// Returns "openai", "anthropic", "gemini" or "replay".
std::string api_kind_name(api_kind k);

struct price_table {
  double input_usd_per_mtok = 0;
  double output_usd_per_mtok = 0;
  std::optional<double> cached_input_usd_per_mtok;  ///< nullopt: cached tokens cost the input price
};

struct model_spec {
  std::string name;        ///< what the user passed to --model
  api_kind api = api_kind::openai;
  std::string model_id;    ///< the provider's name for it
  std::string base_url;    ///< e.g. "https://api.openai.com/v1"
  std::string base_url_env;            ///< env var that overrides base_url when set
  std::string api_key_env;             ///< env var holding the key; empty = no key sent
  bool api_key_required = true;
  ordered_json request = ordered_json::object();  ///< merged into the request body (sampling ...)
  std::vector<std::pair<std::string, std::string>> headers;  ///< extra HTTP headers
  std::optional<int64_t> context_window_tokens;
  std::optional<price_table> price;
  double timeout_s = 1800;
  double connect_timeout_s = 30;
  retry_policy retry;
  bool send_reasoning_content = false;  ///< echo earlier reasoning back to the model
  bool send_seed = false;               ///< send the trajectory seed (OpenAI-compatible "seed")
  /// Server-sent events instead of one JSON body (OpenAI `stream: true`, Anthropic streaming, Gemini
  /// streamGenerateContent): long reasoning calls survive proxies that cut idle or long requests.
  bool stream = false;
  double stream_idle_timeout_s = 600;   ///< a stream silent this long counts as a dropped connection
  std::string replay_file;              ///< for api_kind::replay
  std::string description;

  /// The output-token cap set in `request` (max_tokens, max_completion_tokens or
  /// generationConfig.maxOutputTokens), or nullopt.
  [[nodiscard]] std::optional<int64_t> max_output_tokens() const;
};

/// Models by name, as read from a config file.
struct model_catalog {
  std::filesystem::path source;
  std::map<std::string, model_spec> models;
};

/// Reads and validates a models file ("format": "ptxbench.models/1"); errors name the JSON path.
result<model_catalog> load_model_catalog(const std::filesystem::path& path);

/// Parses the catalog from JSON already read (`what` names it in errors).
result<model_catalog> model_catalog_from_json(const ordered_json& j, const std::string& what);

/// Resolves --model: "replay:FILE", "openai:ID", "anthropic:ID", "gemini:ID", or a catalog name.
/// `base_url_override` (may be empty) replaces the base URL. Fails with a "did you mean" for a
/// misspelled name.
result<model_spec> resolve_model(const std::string& name, const model_catalog& catalog,
                                 const std::string& base_url_override);

/// The model's JSON for trajectory and plan files: everything but secrets (keys are never stored).
ordered_json to_json(const model_spec& m);

/// Reads one environment variable (nullopt when unset or empty). Passed in so only src/cli/ reads the
/// process environment.
using env_lookup = std::function<std::optional<std::string>(const std::string& name)>;

/// Applies base_url_env (when set and no --base-url was given) and returns the API key from
/// api_key_env. Fails with a one-line message naming the variable when a required key is missing.
result<std::string> resolve_environment(model_spec& m, const env_lookup& env, bool base_url_overridden);

}  // namespace ptxbench::agent
