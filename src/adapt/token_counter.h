#pragma once
// How the SFT export measures a row: the target model's tokenizer (a Hugging Face tokenizer.json,
// byte-level BPE) over the row rendered with the target's chat template — the same measure train/
// applies (the whole rendering, every message). cl100k_base is a fallback for when no tokenizer is
// given, labelled as such in the manifest: it is not the target model's tokenizer.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "prompts/bpe_tokenizer.h"
#include "prompts/chat_template.h"

namespace ptxbench::adapt {

class token_counter {
 public:
  /// `tokenizer`: a tokenizer.json path, "cl100k", or "" (cl100k fallback). `chat_template`: "auto"
  /// (from tokenizer_config.json beside the tokenizer, else chatml), chatml, qwen3 or llama3.
  /// `cl100k_candidates`: where the cl100k ranks may be. Errors are one line.
  static result<token_counter> open(const std::string& tokenizer, const std::string& chat_template,
                                    const std::vector<std::filesystem::path>& cl100k_candidates);

  /// Tokens of the conversation rendered by the template (no generation prompt).
  [[nodiscard]] result<std::size_t> count(const std::vector<prompts::chat_turn>& messages) const;
  /// The chat template the rows are rendered with.
  [[nodiscard]] prompts::chat_template template_kind() const { return m_template; }
  /// Strings that must not occur in a message: the template's markers and the tokenizer's special tokens.
  [[nodiscard]] const std::vector<std::string>& reserved() const { return m_reserved; }
  /// {method, tokenizer, tokenizer_sha256, chat_template, chat_template_source, exact}
  [[nodiscard]] const ordered_json& description() const { return m_description; }

 private:
  std::shared_ptr<const prompts::bpe_tokenizer> m_tok;
  prompts::chat_template m_template = prompts::chat_template::chatml;
  std::vector<std::string> m_reserved;
  ordered_json m_description;
};

}  // namespace ptxbench::adapt
