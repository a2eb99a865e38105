#pragma once
// The paper's Fig. 3 comparison: the same model writing CUDA-PTX and Triton for the same task. Per
// (model, arch, task), the turns of every run in each language are pooled, and the two languages'
// Fast_p and Fast^Inst_p curves and best speedups are set side by side. Triton turns are
// target-correct by the same rule as CUDA-PTX ones (a required family verified as executed in the
// kernels Triton compiled), so Fast^Inst_p compares like with like.

#include <optional>
#include <string>
#include <vector>

#include "metrics/aggregate.h"

namespace ptxbench::metrics {

struct language_side {
  int runs = 0;                          ///< runs (exp_dirs) pooled; 0: the model has none in this language
  int64_t turns = 0;                     ///< counted turns with turn < T
  best_speedups best;
  std::vector<fast_p_point> fast_p;      ///< one per p value (empty when runs == 0)
};

struct language_comparison {
  std::string model, arch, definition;
  int turn_limit = 0;
  language_side cuda, triton;
};

/// One comparison per (model, arch, definition) that has at least one Triton run, in order of first
/// appearance; the CUDA-PTX side is empty (runs = 0) when the model has no CUDA-PTX run there.
std::vector<language_comparison> compare_languages(const std::vector<turn_group>& groups, int turn_limit,
                                                   const std::vector<double>& p_values);

/// language_comparison.csv: model,arch,definition,turn_limit,p, then per language (cuda_, triton_)
/// fast_p, fast_inst_p, best_speedup, best_target_speedup, runs, n_turns; empty cells for a missing side.
std::string language_comparison_csv(const std::vector<language_comparison>& rows);

}  // namespace ptxbench::metrics
