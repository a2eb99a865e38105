#include "baselines/cudnn_gqa_graph.h"

#include <fmt/format.h>

#include <limits>

#include "baselines/cudnn_sdpa_graph.h"

namespace ptxbench::gpu::cudnn {
namespace {

// -inf from cuDNN 9.10 on; older fused kernels expect the lowest finite float in masked positions.
float fill_value(version runtime) {
  return runtime.code >= 91000 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::lowest();
}

// A [b,1,1,1] (or [b+1,1,1,1]) integer tensor, one value per batch entry.
tensor_ref per_batch(graph_builder& g, int64_t uid, int64_t rows, cudnnDataType_t type) {
  return g.tensor(uid, {rows, 1, 1, 1}, {1, 1, 1, 1}, type);
}

// Keeps x where row < seq_len_q and col < seq_len_kv of its batch entry, else the fill value.
tensor_ref padding_mask(graph_builder& g, tensor_ref x, tensor_ref seq_q, tensor_ref seq_kv, gqa_graph& out,
                        version runtime) {
  const auto dims = g.dims(x), strides = g.strides(x);
  tensor_ref row = g.virtual_tensor(dims, strides, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, x, row, CUDNN_DATA_INT32, std::nullopt, std::nullopt, 2);
  tensor_ref col = g.virtual_tensor(dims, strides, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, x, col, CUDNN_DATA_INT32, std::nullopt, std::nullopt, 3);
  tensor_ref row_ok = g.virtual_tensor(dims, strides, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_LT, row, row_ok, CUDNN_DATA_BOOLEAN, seq_q);
  tensor_ref col_ok = g.virtual_tensor(dims, strides, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_LT, col, col_ok, CUDNN_DATA_BOOLEAN, seq_kv);
  tensor_ref keep = g.virtual_tensor(dims, strides, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_LOGICAL_AND, row_ok, keep, CUDNN_DATA_BOOLEAN, col_ok);
  tensor_ref fill = g.scalar_f32(gqa_uid::pad_fill);
  out.by_value.emplace_back(gqa_uid::pad_fill, fill_value(runtime));
  tensor_ref y = g.virtual_tensor(dims, strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, x, y, CUDNN_DATA_FLOAT, fill, keep);
  return y;
}

// Bottom-right causal: keeps x where row + seq_len_kv - seq_len_q >= col (per batch entry). The
// ADD and SUB carry axis 3 and int32 math, as cudnn-frontend's composite diagonal band declares them.
tensor_ref bottom_right_causal_mask(graph_builder& g, tensor_ref x, tensor_ref seq_q, tensor_ref seq_kv,
                                    gqa_graph& out, version runtime) {
  const auto dims = g.dims(x), strides = g.strides(x);
  tensor_ref row = g.virtual_tensor(dims, strides, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, x, row, CUDNN_DATA_FLOAT, std::nullopt, std::nullopt, 2);
  tensor_ref col = g.virtual_tensor(dims, strides, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, x, col, CUDNN_DATA_FLOAT, std::nullopt, std::nullopt, 3);
  tensor_ref shifted = g.virtual_tensor(dims, strides, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_ADD, row, shifted, CUDNN_DATA_INT32, seq_kv, std::nullopt, 3);
  tensor_ref diagonal = g.virtual_tensor(dims, strides, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_SUB, shifted, diagonal, CUDNN_DATA_INT32, seq_q, std::nullopt, 3);
  tensor_ref keep = g.virtual_tensor(dims, strides, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, diagonal, keep, CUDNN_DATA_BOOLEAN, col);
  tensor_ref fill = g.scalar_f32(gqa_uid::causal_fill);
  out.by_value.emplace_back(gqa_uid::causal_fill, fill_value(runtime));
  tensor_ref y = g.virtual_tensor(dims, strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, x, y, CUDNN_DATA_FLOAT, fill, keep);
  return y;
}

void check_versions(const gqa_problem& p, page_table_form table, version runtime) {
  if (p.paged()) {
    if (CUDNN_VERSION < 90500 || runtime.code < 90500)
      throw_not_available("paged K/V (PAGED_CACHE_LOAD)", "cuDNN >= 9.5", runtime);
    if (p.d > 128 && runtime.code < 91000) throw_not_available("paged K/V with D > 128", "cuDNN >= 9.10", runtime);
    if (table == page_table_form::packed && runtime.code < 91002)
      throw_not_available("a packed page table (ragged offset on the table)", "cuDNN >= 9.10.2", runtime);
  }
  if (p.paged() && p.ragged_q() && runtime.code < 90700)
    throw_not_available("paged K/V together with ragged Q", "cuDNN >= 9.7", runtime);
  if (p.causal && runtime.code < 90600 && (p.max_q % 64 != 0 || p.max_kv % 64 != 0))
    throw_not_available("a bottom-right causal mask with sequence lengths not a multiple of 64", "cuDNN >= 9.6",
                        runtime);
}

}  // namespace

const char* gqa_layout_name(gqa_layout layout) {
  switch (layout) {
    case gqa_layout::paged_decode: return "paged_decode";
    case gqa_layout::paged_prefill: return "paged_prefill";
    case gqa_layout::ragged_prefill: return "ragged_prefill";
  }
  return "unknown";
}

const char* page_table_form_name(page_table_form form) {
  return form == page_table_form::packed ? "packed" : "padded";
}

std::unique_ptr<gqa_graph> build_gqa_graph(const gqa_problem& p, page_table_form table, cudnnHandle_t handle,
                                           version runtime) {
  check_versions(p, table, runtime);
  auto out = std::make_unique<gqa_graph>();
  out->table = table;
  out->offsets_int64 = runtime.code >= 90600;
  graph_builder& g = out->builder;
  const cudnnDataType_t offset_type = out->offsets_int64 ? CUDNN_DATA_INT64 : CUDNN_DATA_INT32;
  const int64_t b = p.batch, hq = p.h_q, hk = p.h_kv, d = p.d, sq = p.max_q, skv = p.max_kv;

  tensor_ref seq_q = per_batch(g, gqa_uid::seq_q, b, CUDNN_DATA_INT32);
  tensor_ref seq_kv = per_batch(g, gqa_uid::seq_kv, b, CUDNN_DATA_INT32);
  out->uids = {gqa_uid::seq_q, gqa_uid::seq_kv};

  // Q and O: rows of [h_q, d] (BSHD strides); prefill packs the sequences (ragged offsets).
  const std::vector<int64_t> q_dims{b, hq, sq, d}, q_strides{sq * hq * d, d, hq * d, 1};
  tensor_ref q, o;
  if (p.ragged_q()) {
    tensor_ref q_off = per_batch(g, gqa_uid::q_offset, b + 1, offset_type);
    tensor_ref o_off = per_batch(g, gqa_uid::o_offset, b + 1, offset_type);
    q = g.ragged_tensor(gqa_uid::q, q_dims, q_strides, CUDNN_DATA_BFLOAT16, q_off);
    o = g.ragged_tensor(gqa_uid::o, q_dims, q_strides, CUDNN_DATA_BFLOAT16, o_off);
    out->uids.insert(out->uids.end(), {gqa_uid::q_offset, gqa_uid::o_offset});
  } else {
    q = g.tensor(gqa_uid::q, q_dims, q_strides, CUDNN_DATA_BFLOAT16);
    o = g.tensor(gqa_uid::o, q_dims, q_strides, CUDNN_DATA_BFLOAT16);
  }
  tensor_ref stats = g.tensor(gqa_uid::stats, {b, hq, sq, 1}, {hq * sq, sq, 1, 1}, CUDNN_DATA_FLOAT);
  tensor_ref scale = g.scalar_f32(gqa_uid::scale);
  out->by_value.emplace_back(gqa_uid::scale, p.scale);
  out->uids.insert(out->uids.end(), {gqa_uid::q, gqa_uid::o, gqa_uid::stats});

  // K^T [b, h_kv, d, s_kv] and V [b, h_kv, s_kv, d]: real packed rows, or loaded from the page pool.
  tensor_ref kt, v;
  std::optional<tensor_ref> v_container, table_v;
  if (p.paged()) {
    // The pool [pages, page_size, h_kv, d] declared as [pages, h_kv, page_size, d]; with one key per
    // page the page_size stride is immaterial and the form is the one the frontend's tests use.
    const std::vector<int64_t> pool_dims{p.num_pages, hk, p.page_size, d};
    const std::vector<int64_t> pool_strides = p.page_size == 1 ? std::vector<int64_t>{hk * d, d, d, 1}
                                                                : std::vector<int64_t>{p.page_size * hk * d, d, hk * d, 1};
    tensor_ref k_container = g.tensor(gqa_uid::k, pool_dims, pool_strides, CUDNN_DATA_BFLOAT16);
    v_container = g.tensor(gqa_uid::v, pool_dims, pool_strides, CUDNN_DATA_BFLOAT16);
    // [b, 1, pages_per_sequence, 1]. Padded: one row per sequence. Packed: the kv_indices list
    // itself, each batch entry starting at its kv_indptr offset (the strides the frontend's tests use).
    const int64_t width = p.table_size();
    const std::vector<int64_t> table_dims{b, 1, width, 1};
    const std::vector<int64_t> table_strides = table == page_table_form::packed ? std::vector<int64_t>{width, 1, 1, 1}
                                                                               : std::vector<int64_t>{width, width, 1, 1};
    tensor_ref table_k;
    if (table == page_table_form::packed) {
      tensor_ref off_k = per_batch(g, gqa_uid::table_offset_k, b + 1, CUDNN_DATA_INT32);
      tensor_ref off_v = per_batch(g, gqa_uid::table_offset_v, b + 1, CUDNN_DATA_INT32);
      table_k = g.ragged_tensor(gqa_uid::page_table_k, table_dims, table_strides, CUDNN_DATA_INT32, off_k);
      table_v = g.ragged_tensor(gqa_uid::page_table_v, table_dims, table_strides, CUDNN_DATA_INT32, off_v);
      out->uids.insert(out->uids.end(), {gqa_uid::table_offset_k, gqa_uid::table_offset_v});
    } else {
      table_k = g.tensor(gqa_uid::page_table_k, table_dims, table_strides, CUDNN_DATA_INT32);
      table_v = g.tensor(gqa_uid::page_table_v, table_dims, table_strides, CUDNN_DATA_INT32);
    }
    out->uids.insert(out->uids.end(), {gqa_uid::k, gqa_uid::v, gqa_uid::page_table_k, gqa_uid::page_table_v});
    kt = g.virtual_tensor({b, hk, d, skv}, {d * skv * hk, d * skv, 1, d}, CUDNN_DATA_BFLOAT16);
    g.paged_cache_load(k_container, table_k, seq_kv, kt);
  } else {
    tensor_ref k_off = per_batch(g, gqa_uid::k_offset, b + 1, offset_type);
    tensor_ref v_off = per_batch(g, gqa_uid::v_offset, b + 1, offset_type);
    kt = g.ragged_tensor(gqa_uid::k, {b, hk, d, skv}, {skv * hk * d, d, 1, hk * d}, CUDNN_DATA_BFLOAT16, k_off);
    v = g.ragged_tensor(gqa_uid::v, {b, hk, skv, d}, {skv * hk * d, d, hk * d, 1}, CUDNN_DATA_BFLOAT16, v_off);
    out->uids.insert(out->uids.end(), {gqa_uid::k_offset, gqa_uid::v_offset, gqa_uid::k, gqa_uid::v});
  }

  const std::vector<int64_t> scores{b, hq, sq, skv}, scores_strides = packed_strides(scores);
  tensor_ref logits = g.virtual_tensor(scores, scores_strides, CUDNN_DATA_FLOAT);
  g.matmul(q, kt, logits, graph_builder::gemm_overrides{seq_q, seq_kv, std::nullopt});
  tensor_ref scaled = g.virtual_tensor(scores, scores_strides, CUDNN_DATA_FLOAT);
  g.pointwise(CUDNN_POINTWISE_MUL, logits, scaled, CUDNN_DATA_FLOAT, scale);
  tensor_ref masked = padding_mask(g, scaled, seq_q, seq_kv, *out, runtime);
  if (p.causal) masked = bottom_right_causal_mask(g, masked, seq_q, seq_kv, *out, runtime);
  tensor_ref probs = softmax_with_lse(g, masked, stats);
  if (p.paged()) {
    // V is loaded where the frontend loads it: after the softmax, right before the second matmul.
    v = g.virtual_tensor({b, hk, skv, d}, {d * skv * hk, d * skv, d, 1}, CUDNN_DATA_BFLOAT16);
    g.paged_cache_load(*v_container, *table_v, seq_kv, v);
  }
  g.matmul(probs, v, o, graph_builder::gemm_overrides{seq_q, std::nullopt, seq_kv});
  out->op_graph = g.finalize_graph(handle);
  return out;
}

}  // namespace ptxbench::gpu::cudnn
