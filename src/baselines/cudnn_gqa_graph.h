#pragma once
// cuDNN graphs for grouped-query attention over variable-length sequences (the GQA tasks), written
// against the backend C API: the composite forward pattern of cudnn_sdpa_graph.h with
//   - query heads != key/value heads (h_q a multiple of h_kv; cuDNN groups them itself),
//   - a padding mask and per-sequence GEMM extents from seq_len_q / seq_len_kv ([b,1,1,1] int32),
//   - paged K and V: OPERATION_PAGED_CACHE_LOAD from the page pool through a page table, either
//     padded ([b,1,pages_per_sequence,1]) or packed (the kv_indices list itself, with kv_indptr as
//     its ragged offset; cuDNN >= 9.10.2),
//   - ragged ("THD") Q, O (prefill) and K, V (ragged prefill): packed rows with per-sequence element
//     offsets (RAGGED_OFFSET_DESC),
//   - a causal mask aligned to the bottom right (query i of a sequence with nq queries and nk keys
//     sees key j iff j <= i + nk - nq), built from GEN_INDEX / ADD / SUB / CMP_GE / BINARY_SELECT as
//     cudnn-frontend lowers its diagonal band before cuDNN 9.21.
// The stats (LSE) come out padded, [b, h_q, max_q, 1]; the executable scatters them into the task's
// [total_q, h_q]. docs/attention-baselines.md lists the graph op by op.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "baselines/cudnn_backend.h"
#include "baselines/cudnn_graph_builder.h"

namespace ptxbench::gpu::cudnn {

enum class gqa_layout { paged_decode, paged_prefill, ragged_prefill };
/// How a paged graph reads its page table.
enum class page_table_form { padded, packed };

/// "paged_decode", ...; "padded", "packed".
const char* gqa_layout_name(gqa_layout layout);
const char* page_table_form_name(page_table_form form);

/// One GQA problem as the graph sees it: the batch (sequences) and the padded extents.
struct gqa_problem {
  gqa_layout layout = gqa_layout::ragged_prefill;
  int64_t batch = 0;       ///< sequences
  int64_t h_q = 0;
  int64_t h_kv = 0;
  int64_t d = 0;
  int64_t max_q = 0;       ///< longest sequence of queries (1 for decode): the graph's s_q
  int64_t max_kv = 0;      ///< longest sequence of keys: the graph's s_kv
  int64_t total_q = 0;     ///< query rows of q and output
  int64_t total_kv = 0;    ///< key rows (ragged)
  int64_t num_pages = 0;   ///< page pool (paged)
  int64_t page_size = 1;   ///< keys per page (paged)
  int64_t num_kv_indices = 0;  ///< entries of the packed page table (paged)
  bool causal = false;     ///< bottom-right aligned
  float scale = 0.0F;

  [[nodiscard]] bool paged() const { return layout != gqa_layout::ragged_prefill; }
  [[nodiscard]] bool ragged_q() const { return layout != gqa_layout::paged_decode; }
  /// Pages a sequence may use: the padded page table's width.
  [[nodiscard]] int64_t table_size() const { return (max_kv + page_size - 1) / page_size; }
};

/// Variant-pack unique ids of the GQA graphs' real tensors.
namespace gqa_uid {
inline constexpr int64_t q = 1, k = 2, v = 3, o = 4, stats = 5;
inline constexpr int64_t scale = 20, pad_fill = 21, causal_fill = 22;
inline constexpr int64_t seq_q = 40, seq_kv = 41, page_table_k = 42, page_table_v = 43, table_offset_k = 44,
                         table_offset_v = 45, q_offset = 46, k_offset = 47, v_offset = 48, o_offset = 49;
}  // namespace gqa_uid

struct gqa_graph {
  page_table_form table = page_table_form::padded;  ///< meaningful for paged layouts
  bool offsets_int64 = false;                       ///< ragged offsets are int64 (cuDNN >= 9.6) or int32
  graph_builder builder;
  descriptor op_graph;
  std::vector<int64_t> uids;                        ///< every real tensor the variant pack must bind
  std::vector<std::pair<int64_t, float>> by_value;  ///< by-value scalars (scale, mask fills)
};

/// Builds and finalizes the graph; throws cudnn_error naming what cuDNN rejected, or when the layout
/// needs a newer cuDNN than `runtime` or than these headers.
std::unique_ptr<gqa_graph> build_gqa_graph(const gqa_problem& problem, page_table_form table, cudnnHandle_t handle,
                                           version runtime);

}  // namespace ptxbench::gpu::cudnn
