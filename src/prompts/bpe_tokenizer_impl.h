#pragma once
// Internal to the BPE tokenizer: the state both loaders fill (tiktoken ranks, Hugging Face
// tokenizer.json) and the encoding steps they share. Not part of the library's interface.

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <climits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "prompts/bpe_tokenizer.h"

namespace ptxbench::prompts {

struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using rank_map = std::unordered_map<std::string, int, string_hash, std::equal_to<>>;

struct bpe_tokenizer::impl {
  /// tiktoken: token bytes → rank (= id), merged by the rank of the joined bytes.
  /// Hugging Face: token bytes → id; merged by merge_ranks (the merges list order).
  rank_map ranks;
  bool merge_list = false;               ///< true: Hugging Face merges; false: tiktoken ranks
  rank_map merge_ranks;                  ///< pair_key(left, right) → position in the merges list
  bool ignore_merges = false;            ///< take a whole piece that is in the vocabulary as one token
  std::vector<std::pair<std::string, int>> added;  ///< added tokens (content, id), matched before splitting
  std::vector<std::string> special;      ///< the added tokens marked special
  std::vector<std::vector<std::size_t>> added_by_first_byte = std::vector<std::vector<std::size_t>>(256);
  bool add_prefix_space = false;
  pcre2_code* pattern = nullptr;         ///< the pre-tokenizer regex
  std::string description;

  impl() = default;
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  ~impl() {
    if (pattern) pcre2_code_free(pattern);
  }

  [[nodiscard]] int rank_of(std::string_view bytes) const {
    auto it = ranks.find(bytes);
    return it == ranks.end() ? INT_MAX : it->second;
  }
  static std::string pair_key(std::string_view left, std::string_view right) {
    std::string k = std::to_string(left.size());
    k += ':';
    k += left;
    k += right;
    return k;
  }
  [[nodiscard]] int merge_rank(std::string_view left, std::string_view right) const {
    auto it = merge_ranks.find(pair_key(left, right));
    return it == merge_ranks.end() ? INT_MAX : it->second;
  }

  /// One pre-tokenized piece to ids, by the loader's merge rule.
  void encode_piece(std::string_view piece, std::vector<int>& out) const;
  /// Regex pre-tokenization and BPE of a text without added tokens.
  [[nodiscard]] result<bool> encode_ordinary(std::string_view text, std::vector<int>& out) const;
};

/// Compiles a pre-tokenizer regex with Unicode properties; errors name `what`.
result<pcre2_code*> compile_pattern(const std::string& pattern, const std::string& what);

}  // namespace ptxbench::prompts
