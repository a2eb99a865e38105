#pragma once
// The index inputs of attention over variable-length sequences (the GQA tasks' qo_indptr, kv_indptr
// and kv_indices): what they must satisfy and how they are generated. A workload names them as
// derived inputs with one of four generators:
//
//   ragged.qo_indptr   where each sequence's queries start in q           [len_indptr], 0 .. rows of q
//   ragged.kv_indptr   where each sequence's keys start in k and v        [len_indptr], 0 .. rows of k
//   paged_kv.indptr    where each sequence's pages start in kv_indices    [len_indptr], 0 .. num_kv_indices
//   paged_kv.indices   the page of the pool (k_cache, v_cache) per entry  [num_kv_indices], in [0, num_pages)
//
// The split into sequences is part of the task, so it is fixed per workload: pinned by the input's
// "values", or drawn once from the workload's uuid. Only kv_indices (which pages hold the keys) is
// drawn afresh for every trial — distinct pages in random order — unless the workload pins it too.
// Every rule is checked when the suite loads, so a bad workload is one clear line, never a kernel
// reading out of bounds.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "suite/definition.h"
#include "suite/workload.h"

namespace ptxbench {

inline constexpr std::string_view k_gen_qo_indptr = "ragged.qo_indptr";
inline constexpr std::string_view k_gen_ragged_kv_indptr = "ragged.kv_indptr";
inline constexpr std::string_view k_gen_paged_kv_indptr = "paged_kv.indptr";
inline constexpr std::string_view k_gen_paged_kv_indices = "paged_kv.indices";

/// True for the four generators above.
bool is_index_generator(std::string_view generator);

/// How one workload's queries and keys are split into sequences.
struct sequence_layout {
  bool paged = false;           ///< keys live in a page pool, reached through kv_indices
  bool decode = false;          ///< no qo_indptr input: exactly one query per sequence
  int64_t page_size = 1;        ///< keys per page (paged)
  int64_t num_pages = 0;        ///< pages in the pool (paged)
  int64_t num_kv_indices = 0;   ///< entries of kv_indices (paged)
  int64_t total_q = 0;          ///< query rows
  int64_t total_kv = 0;         ///< key rows (ragged) or key tokens num_kv_indices * page_size (paged)
  std::vector<int32_t> qo_indptr;  ///< n+1 query offsets (decode: 0, 1, ..., n)
  std::vector<int32_t> kv_indptr;  ///< n+1 offsets: into kv_indices (paged) or into k/v rows (ragged)
  std::optional<std::vector<int32_t>> pinned_kv_indices;  ///< kv_indices fixed by the workload

  [[nodiscard]] int64_t sequences() const { return static_cast<int64_t>(qo_indptr.size()) - 1; }
  [[nodiscard]] int64_t q_len(int64_t b) const { return qo_indptr[b + 1] - qo_indptr[b]; }
  /// Keys of sequence b (pages × page size when paged; every page is full).
  [[nodiscard]] int64_t kv_len(int64_t b) const { return (kv_indptr[b + 1] - kv_indptr[b]) * (paged ? page_size : 1); }
  [[nodiscard]] int64_t max_q_len() const;
  [[nodiscard]] int64_t max_kv_len() const;
};

/// The layout of a workload whose definition has index inputs (nullopt when it has none), with
/// every rule checked: indptr arrays start at 0, increase strictly (each sequence has at least one
/// query and one key) and end at the row count they index; qo_indptr and kv_indptr have the same
/// length; decode has len_indptr = rows of q + 1; a prefill sequence has at least as many keys as
/// queries (bottom-right causal: every query sees a key); pinned kv_indices lie in [0, num_pages);
/// drawn ones need num_kv_indices <= num_pages. Errors are one line naming the input.
result<std::optional<sequence_layout>> sequence_layout_for(const definition& d, const workload& w);

/// The seed the layout is drawn from when the workload pins no values: a hash of its uuid.
uint64_t layout_seed(const std::string& uuid);

/// kv_indices for one trial: num_kv_indices distinct pages of the pool in random order, a pure
/// function of (layout, seed); the pinned values when the workload fixes them.
std::vector<int32_t> kv_indices_for_trial(const sequence_layout& layout, uint64_t seed);

/// The values of one index input (by generator) for a trial; fails for a generator the layout has
/// no such input for (qo_indptr of a decode layout, kv_indices of a ragged one).
result<std::vector<int32_t>> index_input_values(const sequence_layout& layout, std::string_view generator,
                                                uint64_t trial_seed);

}  // namespace ptxbench
