#pragma once
// A byte-level BPE tokenizer for OpenAI's cl100k_base encoding, so prompt sizes are reported in
// real tokens rather than characters/4. The ranks come from the npm package `tiktoken` (file
// encoders/cl100k_base.json: the pre-tokenizer regex `pat_str` and the base64 ranks), fetched at
// setup time (scripts/setup.sh); the regex runs on PCRE2 with Unicode properties.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace ptxbench::prompts {

class bpe_tokenizer {
 public:
  /// Loads a tiktoken-npm ranks file ({"pat_str", "special_tokens", "bpe_ranks"}). Fails naming the
  /// file when it is missing, malformed, its regex does not compile, or the ranks are inconsistent.
  static result<bpe_tokenizer> load(const std::filesystem::path& ranks_json);

  /// Token ids of `text` (special-token strings are encoded as ordinary text). Fails when the text
  /// is not valid UTF-8.
  [[nodiscard]] result<std::vector<int>> encode(std::string_view text) const;
  /// Number of tokens of `text`; same failure as encode.
  [[nodiscard]] result<std::size_t> count(std::string_view text) const;
  /// Number of ranks loaded (100256 for cl100k_base).
  [[nodiscard]] std::size_t vocabulary_size() const;

  bpe_tokenizer(bpe_tokenizer&&) noexcept;
  bpe_tokenizer& operator=(bpe_tokenizer&&) noexcept;
  ~bpe_tokenizer();

 private:
  struct impl;
  explicit bpe_tokenizer(std::unique_ptr<impl> p);
  std::unique_ptr<impl> m_impl;
};

}  // namespace ptxbench::prompts
