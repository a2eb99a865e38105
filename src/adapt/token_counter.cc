#include "adapt/token_counter.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/sha256.h"

namespace ptxbench::adapt {
namespace fs = std::filesystem;

result<token_counter> token_counter::open(const std::string& tokenizer, const std::string& chat_template,
                                          const std::vector<fs::path>& cl100k_candidates) {
  token_counter c;
  std::string method, path, sha;
  bool exact = false;
  if (tokenizer.empty() || tokenizer == "cl100k") {
    for (const auto& p : cl100k_candidates) {
      std::error_code ec;
      if (p.empty() || !fs::is_regular_file(p, ec)) continue;
      auto tok = prompts::bpe_tokenizer::load(p);
      if (!tok) return tok.err();
      c.m_tok = std::make_shared<const prompts::bpe_tokenizer>(std::move(*tok));
      path = p.string();
      break;
    }
    if (!c.m_tok)
      return make_error("no tokenizer: pass --tokenizer PATH/tokenizer.json (the target model's); the cl100k fallback "
                        "needs its ranks (scripts/setup.sh fetches them)");
    method = "cl100k_base fallback: NOT the target model's tokenizer, counts are approximate";
  } else {
    auto tok = prompts::bpe_tokenizer::load_hugging_face(tokenizer);
    if (!tok) return tok.err();
    c.m_tok = std::make_shared<const prompts::bpe_tokenizer>(std::move(*tok));
    path = tokenizer;
    method = "tokenizer.json (byte-level BPE) with the chat template";
    exact = true;
  }
  if (auto bytes = read_file(path, std::size_t{512} << 20)) sha = sha256_hex(*bytes);
  std::string source;
  if (chat_template == "auto") {
    c.m_template = prompts::chat_template::chatml;
    source = "default (no chat template beside the tokenizer)";
    // Hugging Face keeps the template in tokenizer_config.json, or (transformers 4.47 and later) in
    // chat_template.jinja beside it.
    fs::path dir = fs::path(path).parent_path();
    fs::path config = dir / "tokenizer_config.json", jinja_file = dir / "chat_template.jinja";
    std::error_code ec;
    std::string jinja, from;
    if (exact && fs::is_regular_file(config, ec)) {
      auto text = read_text_file(config, 64u << 20);
      if (!text) return text.err();
      auto j = parse_json(*text, config.string());
      if (!j) return j.err();
      if (j->is_object() && (*j).contains("chat_template") && (*j)["chat_template"].is_string()) {
        jinja = (*j)["chat_template"].get<std::string>();
        from = config.string();
      }
    }
    if (exact && jinja.empty() && fs::is_regular_file(jinja_file, ec)) {
      auto text = read_text_file(jinja_file, 64u << 20);
      if (!text) return text.err();
      jinja = *text;
      from = jinja_file.string();
    }
    if (!from.empty()) {
      auto guess = prompts::guess_chat_template(jinja);
      if (!guess)
        return make_error(fmt::format("{}: its chat template is none of chatml, qwen3, llama3; pass --chat-template", from));
      c.m_template = *guess;
      source = "guessed from " + from;
    }
  } else {
    auto t = prompts::parse_chat_template(chat_template);
    if (!t) return make_error(fmt::format("--chat-template {}: expected auto, chatml, qwen3 or llama3", chat_template));
    c.m_template = *t;
    source = "--chat-template";
  }
  c.m_reserved = prompts::chat_template_markers(c.m_template);
  for (const auto& s : c.m_tok->special_tokens())
    if (std::find(c.m_reserved.begin(), c.m_reserved.end(), s) == c.m_reserved.end()) c.m_reserved.push_back(s);
  c.m_description = {{"method", method},
                     {"exact", exact},
                     {"tokenizer", path},
                     {"tokenizer_sha256", sha},
                     {"tokenizer_description", c.m_tok->description()},
                     {"chat_template", prompts::chat_template_name(c.m_template)},
                     {"chat_template_source", source}};
  return c;
}

result<std::size_t> token_counter::count(const std::vector<prompts::chat_turn>& messages) const {
  return m_tok->count(prompts::render_chat(m_template, messages, false));
}

}  // namespace ptxbench::adapt
