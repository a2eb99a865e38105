#pragma once
// A byte-level BPE tokenizer, so sizes are reported in real tokens rather than characters/4. Two
// sources:
//  - OpenAI's cl100k_base encoding: the ranks come from the npm package `tiktoken` (file
//    encoders/cl100k_base.json: the pre-tokenizer regex `pat_str` and the base64 ranks), fetched at
//    setup time (scripts/setup.sh);
//  - a Hugging Face `tokenizer.json` of a byte-level BPE model (GPT-2, Qwen, Llama 3 ...): its
//    vocabulary, merges, pre-tokenizer regex(es) and added tokens, so SFT rows are measured with the
//    target model's own tokenizer (docs/adaptation.md, "Token counts").
// The regex runs on PCRE2 with Unicode properties.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
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

  /// Loads a Hugging Face tokenizer.json. Supported: model.type "BPE" over the byte-level alphabet
  /// (no byte_fallback, no subword prefix or suffix, ignore_merges honoured), merges as "a b" strings
  /// or [a, b] pairs, pre_tokenizer ByteLevel (GPT-2's regex when use_regex, add_prefix_space) or a
  /// Sequence of Split (a Regex pattern, behaviour Isolated) and ByteLevel, normalizer null or NFC
  /// (NFC is applied as the identity, exact for text already in NFC — all ASCII is), added tokens
  /// matched literally before splitting. Anything else fails with one line naming the file and the
  /// unsupported part, as does a file that is not a tokenizer.json at all.
  static result<bpe_tokenizer> load_hugging_face(const std::filesystem::path& tokenizer_json);

  /// Token ids of `text`. cl100k: special-token strings are encoded as ordinary text; tokenizer.json:
  /// added tokens (e.g. <|im_start|>) are single tokens wherever they appear. Fails when the text is
  /// not valid UTF-8.
  [[nodiscard]] result<std::vector<int>> encode(std::string_view text) const;
  /// Number of tokens of `text`; same failure as encode.
  [[nodiscard]] result<std::size_t> count(std::string_view text) const;
  /// Number of ranks loaded (100256 for cl100k_base); for tokenizer.json, the model's vocabulary.
  [[nodiscard]] std::size_t vocabulary_size() const;
  /// The id of a token (an added token's content, or a vocabulary entry's bytes), if any.
  [[nodiscard]] std::optional<int> token_id(std::string_view token) const;
  /// The added tokens marked special (tokenizer.json), e.g. <|im_start|>; empty for cl100k.
  [[nodiscard]] const std::vector<std::string>& special_tokens() const;
  /// e.g. "Hugging Face byte-level BPE (tokenizer.json: PATH; 151643 tokens, 151387 merges, 22 added)".
  [[nodiscard]] const std::string& description() const;

  bpe_tokenizer(bpe_tokenizer&&) noexcept;
  bpe_tokenizer& operator=(bpe_tokenizer&&) noexcept;
  ~bpe_tokenizer();

 private:
  struct impl;
  explicit bpe_tokenizer(std::unique_ptr<impl> p);
  std::unique_ptr<impl> m_impl;
};

}  // namespace ptxbench::prompts
