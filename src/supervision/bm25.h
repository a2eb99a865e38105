#pragma once
// Okapi BM25 over bags of terms, with k1 and b as parameters (upstream's retrieval uses k1 = 1.5,
// b = 0.75). Written here, in about eighty lines, rather than taken from a library:
// - Xapian's BM25Weight (Debian libxapian-dev) takes k1 and b, but it scores documents held in a
//   Xapian database, adds its own k2/k3 query terms and a min_normlen clamp on document length, and
//   would make the agent's binary depend on Xapian for one formula over a few hundred in-memory
//   documents that are rebuilt for every run;
// - SQLite's FTS5 bm25() (SQLite is already a dependency) fixes k1 at 1.2 and b at 0.75, and its
//   tokenizers do not know that comments must be dropped and PTX strings kept (docs/supervision.md).
// The formula below is the textbook one with the non-negative idf of Lucene; the unit test checks
// its scores against values computed by hand.
//
//   score(D, Q) = Σ_{t ∈ distinct(Q)} idf(t) · f(t,D)·(k1 + 1) / (f(t,D) + k1·(1 − b + b·|D|/avgdl))
//   idf(t)      = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))
//
// N: documents; n(t): documents containing t; f(t,D): occurrences of t in D; |D|: terms in D; avgdl:
// the mean |D|. Each distinct query term counts once: the query is a whole failing kernel, and a
// word it repeats forty times (threadIdx) must not outweigh the rare words that characterise it.

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/result.h"

namespace ptxbench::supervision {

struct bm25_params {
  double k1 = 1.5;
  double b = 0.75;
};

/// Fails unless k1 is finite and >= 0 and b is in [0, 1].
status check_bm25_params(const bm25_params& p);

class bm25_index {
 public:
  /// Indexes the documents (each a bag of terms, order irrelevant). Parameters must be valid.
  bm25_index(const std::vector<std::vector<std::string>>& documents, bm25_params params);

  /// idf(t) of the formula above; ln(1 + (N + 0.5) / 0.5) for a term no document holds.
  [[nodiscard]] double idf(const std::string& term) const;
  /// One score per document, in document order; 0 for a document sharing no term with the query.
  [[nodiscard]] std::vector<double> scores(const std::vector<std::string>& query) const;

  [[nodiscard]] std::size_t size() const { return m_lengths.size(); }
  [[nodiscard]] double average_length() const { return m_avgdl; }

 private:
  bm25_params m_params;
  std::vector<std::unordered_map<std::string, int>> m_tf;  ///< per document: term -> occurrences
  std::vector<std::size_t> m_lengths;
  std::unordered_map<std::string, int> m_df;              ///< term -> documents holding it
  double m_avgdl = 0;
};

}  // namespace ptxbench::supervision
