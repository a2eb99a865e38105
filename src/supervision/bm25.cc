#include "supervision/bm25.h"

#include <cmath>
#include <unordered_set>

#include <fmt/format.h>

namespace ptxbench::supervision {

status check_bm25_params(const bm25_params& p) {
  if (!std::isfinite(p.k1) || p.k1 < 0) return make_error(fmt::format("BM25 k1 must be a finite number >= 0, got {}", p.k1));
  if (!std::isfinite(p.b) || p.b < 0 || p.b > 1) return make_error(fmt::format("BM25 b must be in [0, 1], got {}", p.b));
  return ok();
}

bm25_index::bm25_index(const std::vector<std::vector<std::string>>& documents, bm25_params params)
    : m_params(params) {
  std::size_t total = 0;
  for (const auto& doc : documents) {
    auto& tf = m_tf.emplace_back();
    for (const auto& term : doc) ++tf[term];
    for (const auto& [term, _] : tf) ++m_df[term];
    m_lengths.push_back(doc.size());
    total += doc.size();
  }
  m_avgdl = documents.empty() ? 0 : static_cast<double>(total) / static_cast<double>(documents.size());
}

double bm25_index::idf(const std::string& term) const {
  auto it = m_df.find(term);
  double n = it == m_df.end() ? 0 : it->second;
  double N = static_cast<double>(m_lengths.size());
  return std::log(1.0 + (N - n + 0.5) / (n + 0.5));
}

std::vector<double> bm25_index::scores(const std::vector<std::string>& query) const {
  std::vector<double> out(m_lengths.size(), 0.0);
  if (m_avgdl <= 0) return out;  // every document is empty: nothing can match
  std::unordered_set<std::string> seen;
  for (const auto& term : query) {
    if (!seen.insert(term).second || !m_df.count(term)) continue;
    double w = idf(term);
    for (std::size_t d = 0; d < m_tf.size(); ++d) {
      auto it = m_tf[d].find(term);
      if (it == m_tf[d].end()) continue;
      double f = it->second;
      double norm = m_params.k1 * (1.0 - m_params.b + m_params.b * static_cast<double>(m_lengths[d]) / m_avgdl);
      out[d] += w * f * (m_params.k1 + 1.0) / (f + norm);
    }
  }
  return out;
}

}  // namespace ptxbench::supervision
