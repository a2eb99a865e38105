#pragma once
// How prompt sizes are measured: a real cl100k_base BPE count when the ranks file is available,
// otherwise characters / 4, labelled as such so no one mistakes an estimate for a count.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "prompts/bpe_tokenizer.h"

namespace ptxbench::prompts {

class token_estimator {
 public:
  /// The chars/4 fallback; `why` says why no tokenizer is used (shown in method()).
  static token_estimator chars_over_4(const std::string& why);
  /// The first candidate ranks file that exists and loads; the chars/4 fallback when none does
  /// (method() then names what was tried or why loading failed).
  static token_estimator find(const std::vector<std::filesystem::path>& candidates);

  /// Tokens of `text` (invalid UTF-8 falls back to chars/4 for that text).
  [[nodiscard]] std::size_t count(std::string_view text) const;
  /// e.g. "cl100k_base BPE (ranks: build/third_party/tiktoken/cl100k_base.json)" or
  /// "chars/4 estimate (no cl100k ranks: ...)".
  [[nodiscard]] const std::string& method() const { return m_method; }
  /// True for a real BPE count.
  [[nodiscard]] bool is_exact() const { return m_bpe != nullptr; }

 private:
  std::shared_ptr<const bpe_tokenizer> m_bpe;
  std::string m_method;
};

/// Default places to look for the ranks: `$PTXBENCH_TIKTOKEN_RANKS` (passed in as env_value),
/// <root>/build/third_party/tiktoken/cl100k_base.json, <cache_dir>/tiktoken/cl100k_base.json.
std::vector<std::filesystem::path> default_ranks_candidates(const std::string& env_value,
                                                            const std::filesystem::path& root,
                                                            const std::filesystem::path& cache_dir);

}  // namespace ptxbench::prompts
