#include "prompts/token_estimator.h"

#include <system_error>

namespace ptxbench::prompts {

token_estimator token_estimator::chars_over_4(const std::string& why) {
  token_estimator e;
  e.m_method = "chars/4 estimate (" + why + ")";
  return e;
}

token_estimator token_estimator::find(const std::vector<std::filesystem::path>& candidates) {
  std::string tried;
  for (const auto& p : candidates) {
    if (p.empty()) continue;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec)) {
      tried += (tried.empty() ? "" : ", ") + p.string();
      continue;
    }
    auto tok = bpe_tokenizer::load(p);
    if (!tok) return chars_over_4("cl100k ranks unusable: " + tok.err().message);
    token_estimator e;
    e.m_bpe = std::make_shared<const bpe_tokenizer>(std::move(*tok));
    e.m_method = "cl100k_base BPE (ranks: " + p.string() + ")";
    return e;
  }
  return chars_over_4("no cl100k ranks found; run scripts/setup.sh or set PTXBENCH_TIKTOKEN_RANKS; tried " +
                      (tried.empty() ? std::string("nothing") : tried));
}

std::size_t token_estimator::count(std::string_view text) const {
  if (m_bpe) {
    if (auto n = m_bpe->count(text)) return *n;
  }
  return (text.size() + 3) / 4;
}

std::vector<std::filesystem::path> default_ranks_candidates(const std::string& env_value,
                                                            const std::filesystem::path& root,
                                                            const std::filesystem::path& cache_dir) {
  std::vector<std::filesystem::path> out;
  if (!env_value.empty()) out.emplace_back(env_value);
  out.push_back(root / "build" / "third_party" / "tiktoken" / "cl100k_base.json");
  out.push_back(cache_dir / "tiktoken" / "cl100k_base.json");
  return out;
}

}  // namespace ptxbench::prompts
